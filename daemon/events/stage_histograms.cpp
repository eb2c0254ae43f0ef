#include "daemon/events/stage_histograms.h"

namespace vigil {

namespace {

double secondsOfMs(double ms) { return ms / 1000.0; }

}  // namespace

void StagesByBackend::observe(const FrameResult& r, SteadyClock::time_point received,
                              Histogram* captureToPublish) {
  const auto published = SteadyClock::now();
  auto it = stages_.find(r.backend);
  if (it == stages_.end()) it = stages_.emplace(r.backend, stagesFor_(r.backend)).first;
  const StageHistograms& stages = it->second;
  stages.captureToStart->observe(
      std::chrono::duration<double>(r.startTime - r.captureTime).count());
  stages.preprocess->observe(secondsOfMs(r.timings.preprocessMs));
  stages.inference->observe(secondsOfMs(r.timings.inferenceMs));
  stages.postprocess->observe(secondsOfMs(r.timings.postprocessMs));
  stages.publish->observe(std::chrono::duration<double>(published - received).count());
  if (captureToPublish != nullptr) {
    captureToPublish->observe(std::chrono::duration<double>(published - r.captureTime).count());
  }
}

}  // namespace vigil
