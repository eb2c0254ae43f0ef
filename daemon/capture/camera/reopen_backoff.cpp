#include "daemon/capture/camera/reopen_backoff.h"

#include <algorithm>

namespace vigil {

void ReopenBackoff::openFailed(const Error& error) {
  if (error.code == ErrorCode::kInvalidArgument || error.code == ErrorCode::kUnsupported) {
    delay_ = policy_.max;
  }
  counters_.openFailures.fetch_add(1, std::memory_order_relaxed);
}

void ReopenBackoff::opened() {
  if (everStreamed_) counters_.reconnects.fetch_add(1, std::memory_order_relaxed);
}

void ReopenBackoff::streamed() {
  everStreamed_ = true;
  delay_ = policy_.initial;
}

void ReopenBackoff::lengthened() { delay_ = std::min(delay_ * 2, policy_.max); }

}  // namespace vigil
