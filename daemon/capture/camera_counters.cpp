#include "daemon/capture/camera_counters.h"

namespace vigil {

void CameraCounters::setDecoder(std::string decoder) {
  std::lock_guard lock(decoderMutex_);
  decoder_ = std::move(decoder);
}

std::string CameraCounters::decoder() const {
  std::lock_guard lock(decoderMutex_);
  return decoder_;
}

}  // namespace vigil
