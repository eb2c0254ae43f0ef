#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "daemon/base/metrics.h"
#include "daemon/pipeline/inference_worker.h"

namespace vigil {

// The histograms every result feeds (metrics/daemon_metrics.h makes them).
struct StageHistograms {
  std::shared_ptr<Histogram> captureToStart;
  std::shared_ptr<Histogram> preprocess;
  std::shared_ptr<Histogram> inference;
  std::shared_ptr<Histogram> postprocess;
  std::shared_ptr<Histogram> publish;
};
// One backend's stage histograms, made the first time a frame of that backend comes (an NPU
// and the CPU it falls back to are timed apart).
using StageHistogramsFor = std::function<StageHistograms(const std::string& backend)>;

// Each backend's stage histograms, made on its first result, and what one result feeds them:
// the time from capture to the detector's start, the detector's three stages, and from the
// result's arrival on the control thread to the end of its handling (publish), with the camera's
// capture-to-publish.
//
// Threads: the control (io_context) thread only (ResultPath owns it).
class StagesByBackend {
 public:
  explicit StagesByBackend(StageHistogramsFor stagesFor) : stagesFor_(std::move(stagesFor)) {}

  // `r` was handled from `received` until now; `captureToPublish`: the camera's histogram,
  // nullptr when it has none.
  void observe(const FrameResult& r, SteadyClock::time_point received, Histogram* captureToPublish);

 private:
  StageHistogramsFor stagesFor_;
  std::map<std::string, StageHistograms> stages_;  // by backend
};

}  // namespace vigil
