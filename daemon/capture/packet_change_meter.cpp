#include "daemon/capture/packet_change_meter.h"

#include <algorithm>

namespace vigil {

void PacketChangeMeter::restart() {
  window_.clear();
  windowBytes_ = 0;
  start_.reset();
  last_.reset();
  baseline_ = 0;
}

bool PacketChangeMeter::changed(double seconds, std::int64_t bytes) {
  if (last_ && seconds < *last_) restart();  // time went back (a file looped): start again
  if (!start_) start_ = seconds;
  const double since = last_ ? seconds - *last_ : 0;
  last_ = seconds;
  window_.push_back({seconds, bytes});
  windowBytes_ += bytes;
  while (window_.front().seconds <= seconds - kWindowSeconds) {
    windowBytes_ -= window_.front().bytes;
    window_.pop_front();
  }
  const auto now = static_cast<double>(windowBytes_);
  if (seconds - *start_ < kWindowSeconds) return false;  // the first window is not full yet
  if (baseline_ == 0) {
    baseline_ = now;
    return false;
  }
  if (now > kChangeRatio * baseline_) return true;  // a change does not become the usual
  baseline_ += (now - baseline_) * std::min(1.0, since / kBaselineSeconds);
  return false;
}

}  // namespace vigil
