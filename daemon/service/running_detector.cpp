#include "daemon/service/running_detector.h"

#include <boost/asio/post.hpp>

#include "daemon/events/result_delivery.h"

namespace vigil {

RunningDetector::RunningDetector(Registry& registry, DetectorReload::Loader loader)
    : loader_(std::move(loader)), backendStatus_(registry) {}

bool RunningDetector::start(const DetectorConfig& config, Scheduler& scheduler,
                            boost::asio::io_context& io, ResultPath& results, Reloaded reloaded) {
  auto loaded = loader_(config);
  if (!loaded) {
    log_->error("detector: {}", loaded.error().message);
    return false;
  }
  backendStatus_.reset(config.backend, loaded->detector->backend(), loaded->reason);
  worker_ = std::make_unique<InferenceWorker>(std::move(loaded->detector), scheduler,
                                              deliverResults(io, results, backendStatus_));
  worker_->start();
  reload_ = std::make_unique<DetectorReload>(
      *worker_,
      [&io, reloaded = std::move(reloaded)](DetectorReload::Outcome out) {
        boost::asio::post(io, [reloaded, out = std::move(out)] { reloaded(out); });
      },
      loader_);
  return true;
}

std::string RunningDetector::reload(const DetectorConfig& next, const DetectorConfig& running) {
  return reload_->begin(next, running) ? "; the new detector loads in the background"
                                       : "; the detector section was not (a detector is still "
                                         "loading: SIGHUP again once it is in use)";
}

void RunningDetector::reloaded(const DetectorReload::Outcome& out) {
  if (out.backend) backendStatus_.reset(*out.backend);
  detectorLoad_ = DetectorLoad(out.running.threads);
  if (out.applied) {
    log_->info("reload: the new detector is in use (loaded in {:.2f} s)", out.loadSeconds);
  } else {
    log_->error("reload: the new detector does not load ({}); the previous one {}", out.error,
                out.backend ? "runs again" : "keeps running");
  }
}

// `auto` switched between the NPU and the CPU: the backend's own log line said why.
bool RunningDetector::backendChanged() {
  if (!backendStatus_.poll()) return false;
  const BackendStatus::InUse& now = backendStatus_.inUse();
  if (now.name == "npu") {
    log_->info("detector: backend in use is now npu ({})", now.device);
  } else {
    log_->warn("detector: backend in use is now {} ({})", now.name, now.reason);
  }
  return true;
}

void RunningDetector::watchLoad(SteadyClock::time_point now) {
  if (auto change = detectorLoad_.observe(now, worker_->busySeconds())) {
    log_->log(change->saturated ? spdlog::level::warn : spdlog::level::info, change->message);
  }
}

}  // namespace vigil
