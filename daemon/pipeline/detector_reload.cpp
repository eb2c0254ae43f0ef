#include "daemon/pipeline/detector_reload.h"

#include "daemon/log.h"

namespace vigil {

namespace {

constexpr auto kReopenRetry = std::chrono::seconds(5);

double secondsSince(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

}  // namespace

DetectorReload::DetectorReload(InferenceWorker& worker, Done done, Loader loader)
    : worker_(worker), done_(std::move(done)), loader_(std::move(loader)) {}

bool DetectorReload::begin(DetectorConfig next, DetectorConfig running) {
  if (busy_.exchange(true)) return false;
  if (thread_.joinable()) thread_.join();  // the last load, ended
  thread_ = std::thread([this, next = std::move(next), running = std::move(running)] {
    if (mayHoldAnNpuSession(next) || mayHoldAnNpuSession(running)) {
      oneAtATime(next, running);
    } else {
      sideBySide(next, running);
    }
    busy_ = false;
  });
  return true;
}

void DetectorReload::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::optional<std::string> DetectorReload::loadInto(const DetectorConfig& config,
                                                    std::optional<BackendStatus::Facts>& facts) {
  auto loaded = loader_(config);
  if (!loaded) return loaded.error().message;
  facts = BackendStatus::factsOf(config.backend, loaded->detector->backend(), loaded->reason);
  // The old detector, if the worker still has one, goes here, off the worker and the control
  // thread.
  worker_.replace(std::move(loaded->detector));
  return std::nullopt;
}

void DetectorReload::sideBySide(const DetectorConfig& next, const DetectorConfig& running) {
  logger("daemon")->info("reload: loading the new detector; the frames go on with the old one");
  Outcome out;
  const auto start = SteadyClock::now();
  auto error = loadInto(next, out.backend);
  out.loadSeconds = secondsSince(start);
  out.applied = !error;
  out.running = out.applied ? next : running;
  if (error) out.error = *error;
  done_(std::move(out));
}

void DetectorReload::oneAtATime(const DetectorConfig& next, const DetectorConfig& running) {
  auto log = logger("daemon");
  log->info(
      "reload: one NPU session per process: inference stops, the old detector is "
      "released, then the new one opens");
  worker_.take().reset();
  Outcome out;
  const auto start = SteadyClock::now();
  auto error = loadInto(next, out.backend);
  out.loadSeconds = secondsSince(start);
  if (!error) {
    out.applied = true;
    out.running = next;
    done_(std::move(out));
    return;
  }
  out.error = *error;
  out.running = running;
  for (;;) {
    auto again = loadInto(running, out.backend);
    if (!again) break;
    log->error("reload: the previous detector does not load again either ({}); retrying in {} s",
               *again, kReopenRetry.count());
    std::unique_lock lock(mutex_);
    if (wake_.wait_for(lock, kReopenRetry, [this] { return stopping_; })) return;
  }
  done_(std::move(out));
}

}  // namespace vigil
