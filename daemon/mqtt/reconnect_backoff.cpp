#include "daemon/mqtt/reconnect_backoff.h"

#include <algorithm>

namespace vigil {

void ReconnectBackoff::failed() {
  backoff_ = backoff_.count() == 0 ? minRetry_ : std::min(2 * backoff_, maxRetry_);
  nextAttempt_ = std::chrono::steady_clock::now() + backoff_;
}

void ReconnectBackoff::lost() {
  backoff_ = minRetry_;
  nextAttempt_ = std::chrono::steady_clock::now() + backoff_;
}

}  // namespace vigil
