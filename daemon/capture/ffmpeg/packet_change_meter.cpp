#include "daemon/capture/ffmpeg/packet_change_meter.h"

#include <algorithm>

namespace vigil {

namespace {

// The most time one packet stands for in the running average: the gaps while nothing was fed
// (a wake, another stretch) are not time the usual amount was seen.
constexpr double kMostSecondsAPacket = 0.2;

}  // namespace

void PacketChangeMeter::startStretch() {
  window_.clear();
  windowBytes_ = 0;
  start_.reset();
  last_.reset();
}

void PacketChangeMeter::reset() {
  startStretch();
  baseline_ = 0;
}

bool PacketChangeMeter::changed(double seconds, std::int64_t bytes) {
  if (last_ && seconds < *last_) startStretch();  // time went back (a file looped)
  if (!start_) start_ = seconds;
  const double since = last_ ? std::min(seconds - *last_, kMostSecondsAPacket) : 0;
  last_ = seconds;
  window_.push_back({seconds, bytes});
  windowBytes_ += bytes;
  while (window_.front().seconds <= seconds - kWindowSeconds) {
    windowBytes_ -= window_.front().bytes;
    window_.pop_front();
  }
  const auto now = static_cast<double>(windowBytes_);
  const bool full = seconds - *start_ >= kWindowSeconds;
  if (baseline_ == 0) {
    if (full) baseline_ = now;  // nothing usual yet: the first full window is
    return false;
  }
  // A window not full yet counts fewer bytes: it may say "changed", it does not teach.
  const bool change = now > kChangeRatio * baseline_;
  if (full) {
    baseline_ += (now - baseline_) *
                 std::min(1.0, since / (change ? kLastingChangeSeconds : kBaselineSeconds));
  }
  return change;
}

}  // namespace vigil
