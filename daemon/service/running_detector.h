#pragma once

// clang-format off
// Boost 1.74's asio uses std::exchange without including <utility> (fails with g++ 12, C++20).
#include <utility>
#include <boost/asio/io_context.hpp>
// clang-format on

#include <functional>
#include <memory>
#include <string>

#include "daemon/base/log.h"
#include "daemon/base/metrics.h"
#include "daemon/events/result_path.h"
#include "daemon/pipeline/backend_status.h"
#include "daemon/pipeline/detector_load.h"
#include "daemon/pipeline/detector_reload.h"
#include "daemon/pipeline/inference_worker.h"
#include "daemon/pipeline/scheduler.h"
#include "daemon/settings/settings.h"

namespace vigil {

// The daemon's detector: the inference worker that owns it, a reload's new detector loading in
// the background (DetectorReload), which backend answers (BackendStatus: its series, the status
// attributes) and whether the detector keeps up (DetectorLoad); each change said in the log.
// Threads: the control thread; the worker runs its own.
class RunningDetector {
 public:
  using Reloaded = std::function<void(const DetectorReload::Outcome&)>;

  // The backend's series go to `registry`; `loader` loads a configured detector.
  explicit RunningDetector(Registry& registry, DetectorReload::Loader loader = loadDetector);

  // Loads `config`'s detector and starts its worker on `scheduler`'s frames, the results handed
  // to `results` on `io`'s thread; the end of each later reload is posted there to `reloaded`.
  // False (logged) when the detector does not load.
  bool start(const DetectorConfig& config, Scheduler& scheduler, boost::asio::io_context& io,
             ResultPath& results, Reloaded reloaded);
  // SIGHUP changed the detector section from `running` to `next`: what the reload's log line
  // adds about it (the new detector loads in the background, or not while one still loads).
  std::string reload(const DetectorConfig& next, const DetectorConfig& running);
  // The end of a reload: the backend and the load follow the detector now running, logged.
  void reloaded(const DetectorReload::Outcome& out);
  // Periodically: true when `auto` switched backends (BackendStatus::poll; logged).
  bool backendChanged();
  // Periodically: logs when the detector stops or starts keeping up.
  void watchLoad(SteadyClock::time_point now);

  const BackendStatus& backendStatus() const { return backendStatus_; }
  // The slot the daemon's metrics and status API read; empty before start().
  const std::unique_ptr<InferenceWorker>& worker() const { return worker_; }
  DetectorReload* reloading() { return reload_.get(); }

 private:
  DetectorReload::Loader loader_;
  std::shared_ptr<spdlog::logger> log_ = logger("daemon");
  BackendStatus backendStatus_;
  DetectorLoad detectorLoad_{1};  // says when the shared detector cannot keep up
  std::unique_ptr<InferenceWorker> worker_;
  std::unique_ptr<DetectorReload> reload_;  // after worker_: its thread uses the worker
};

}  // namespace vigil
