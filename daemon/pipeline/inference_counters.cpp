#include "daemon/pipeline/inference_counters.h"

#include <fmt/format.h>

#include <string>

namespace vigil {

void InferenceCounters::failed(const Error& error, std::string_view camera,
                               std::chrono::steady_clock::time_point at) {
  failures_.fetch_add(1, std::memory_order_relaxed);
  if (error.code == ErrorCode::kInvalidOutput) {
    invalidOutputs_.fetch_add(1, std::memory_order_relaxed);
  }
  if (at - lastLogged_ > std::chrono::seconds(10)) {
    log_->error("[cam={}] detection failed: {}{}", camera, error.message,
                suppressed_ > 0 ? fmt::format(" ({} more since the last report)", suppressed_)
                                : std::string());
    lastLogged_ = at;
    suppressed_ = 0;
  } else {
    ++suppressed_;
  }
}

}  // namespace vigil
