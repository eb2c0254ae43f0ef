#include "daemon/events/camera_rates.h"

namespace vigil {

namespace {

constexpr auto kRateWindow = std::chrono::seconds(2);

}  // namespace

void CameraRates::detectorRan(const StageTimings& timings) {
  // The price of a gated frame: what the detector spends per frame, recently.
  const double detectorSeconds =
      (timings.preprocessMs + timings.inferenceMs + timings.postprocessMs) / 1000.0;
  meanDetectorSeconds_ =
      meanDetectorSeconds_ == 0
          ? detectorSeconds
          : meanDetectorSeconds_ + 0.05 * (detectorSeconds - meanDetectorSeconds_);
}

void CameraRates::priceGated(CameraView& view) const {
  const std::uint64_t gated = view.channel->counters().gated.load();
  view.gatedSeconds += static_cast<double>(gated - view.gatedPriced) * meanDetectorSeconds_;
  view.gatedPriced = gated;
}

void CameraRates::update(CameraView& view, SteadyClock::time_point now) {
  const CameraCounters& c = view.channel->counters();
  if (view.rateSince == SteadyClock::time_point{}) {
    view.rateSince = now;
    view.capturedSince = c.captured.load();
    view.detectedSince = c.detected.load();
    view.captureCpuSince = c.captureCpuSeconds();
    return;
  }
  double dt = std::chrono::duration<double>(now - view.rateSince).count();
  if (dt < std::chrono::duration<double>(kRateWindow).count()) return;
  view.fpsCaptured = static_cast<double>(c.captured.load() - view.capturedSince) / dt;
  view.fpsDetected = static_cast<double>(c.detected.load() - view.detectedSince) / dt;
  const double cpu = c.captureCpuSeconds();
  view.captureCpuShare = (cpu - view.captureCpuSince) / dt;
  view.captureCpuSince = cpu;
  view.rateSince = now;
  view.capturedSince = c.captured.load();
  view.detectedSince = c.detected.load();
}

}  // namespace vigil
