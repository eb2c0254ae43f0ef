#include "daemon/capture/camera/frame_rate_probe.h"

#include <fmt/format.h>

#include <cmath>

namespace vigil {

std::optional<double> FrameRateProbe::frameAt(SteadyClock::time_point now) {
  if (said_) return std::nullopt;
  if (!first_) {
    first_ = now;
    return std::nullopt;
  }
  ++intervals_;
  const std::chrono::duration<double> elapsed = now - *first_;
  if (elapsed < kWindow) return std::nullopt;
  said_ = true;
  return static_cast<double>(intervals_) / elapsed.count();
}

std::string FrameRateProbe::describe(double measured, double declared) {
  if (declared <= 0) return fmt::format("measured {:.1f} fps (the source declared none)", measured);
  if (std::abs(measured - declared) <= kTolerance * declared) {
    return fmt::format("measured {:.1f} fps", measured);
  }
  return fmt::format("measured {:.1f} fps, not the {:.1f} the source declared", measured, declared);
}

}  // namespace vigil
