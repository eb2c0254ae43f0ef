#include "daemon/pipeline/detector_reload.h"

#include "daemon/base/log.h"
#include "daemon/base/thread_name.h"
#include "foundation/background_work.h"

namespace vigil {

namespace {

constexpr auto kReopenRetry = std::chrono::seconds(5);

double secondsSince(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

}  // namespace

// One load on the loader thread. Holds the shared state, not the DetectorReload: after an
// abandoning stop() that object may be gone. Every use of the worker and of `done` happens
// under the shared lock while no stop has begun (live()).
class DetectorReload::Job {
 public:
  Job(std::shared_ptr<Shared> shared, InferenceWorker& worker, Done done, Loader loader)
      : shared_(std::move(shared)),
        worker_(worker),
        done_(std::move(done)),
        loader_(std::move(loader)) {}

  void run(const DetectorConfig& next, const DetectorConfig& running) {
    if (mayHoldAnNpuSession(next) || mayHoldAnNpuSession(running)) {
      oneAtATime(next, running);
    } else {
      sideBySide(next, running);
    }
    bool abandoned = false;
    {
      std::lock_guard lock(shared_->mutex);
      shared_->loading = false;
      abandoned = shared_->abandoned;
    }
    shared_->wake.notify_all();
    if (abandoned) background::detachedEnded();
  }

 private:
  // Runs `use` (of the worker or `done`) unless a stop has begun; false when it has.
  template <typename F>
  bool live(F&& use) {
    std::lock_guard lock(shared_->mutex);
    if (shared_->stopping) return false;
    use();
    return true;
  }

  // Loads `config` and gives it to the worker; the load's error otherwise (or that a stop came
  // meanwhile: the new detector is then dropped here).
  std::optional<std::string> loadInto(const DetectorConfig& config,
                                      std::optional<BackendStatus::Facts>& facts) {
    auto loaded = loader_(config);
    if (!loaded) return loaded.error().message;
    facts = BackendStatus::factsOf(config.backend, loaded->detector->backend(), loaded->reason);
    // The old detector, if the worker still has one, goes here, off the worker and the control
    // thread (outside the lock: a stop does not wait for its release).
    std::unique_ptr<Detector> old;
    if (!live([&] { old = worker_.replace(std::move(loaded->detector)); })) {
      return "the daemon is stopping";
    }
    return std::nullopt;
  }

  void sideBySide(const DetectorConfig& next, const DetectorConfig& running) {
    logger("daemon")->info("reload: loading the new detector; the frames go on with the old one");
    Outcome out;
    const auto start = SteadyClock::now();
    auto error = loadInto(next, out.backend);
    out.loadSeconds = secondsSince(start);
    out.applied = !error;
    out.running = out.applied ? next : running;
    if (error) out.error = *error;
    live([&] { done_(std::move(out)); });
  }

  void oneAtATime(const DetectorConfig& next, const DetectorConfig& running) {
    auto log = logger("daemon");
    log->info(
        "reload: one NPU session per process: inference stops, the old detector is "
        "released, then the new one opens");
    std::unique_ptr<Detector> old;
    if (!live([&] { old = worker_.take(); })) return;
    old.reset();
    Outcome out;
    const auto start = SteadyClock::now();
    auto error = loadInto(next, out.backend);
    out.loadSeconds = secondsSince(start);
    if (!error) {
      out.applied = true;
      out.running = next;
      live([&] { done_(std::move(out)); });
      return;
    }
    out.error = *error;
    out.running = running;
    for (;;) {
      auto again = loadInto(running, out.backend);
      if (!again) break;
      log->error("reload: the previous detector does not load again either ({}); retrying in {} s",
                 *again, kReopenRetry.count());
      std::unique_lock lock(shared_->mutex);
      if (shared_->wake.wait_for(lock, kReopenRetry, [this] { return shared_->stopping; })) return;
    }
    live([&] { done_(std::move(out)); });
  }

  std::shared_ptr<Shared> shared_;
  InferenceWorker& worker_;  // only inside live()
  Done done_;                // only inside live()
  Loader loader_;
};

DetectorReload::DetectorReload(InferenceWorker& worker, Done done, Loader loader)
    : worker_(worker), done_(std::move(done)), loader_(std::move(loader)) {}

bool DetectorReload::begin(DetectorConfig next, DetectorConfig running) {
  {
    std::lock_guard lock(shared_->mutex);
    if (shared_->loading || shared_->stopping) return false;
    shared_->loading = true;
    shared_->since = SteadyClock::now();
  }
  if (thread_.joinable()) thread_.join();  // the last load, ended
  thread_ = std::thread([job = std::make_shared<Job>(shared_, worker_, done_, loader_),
                         next = std::move(next),
                         running = std::move(running)] { job->run(next, running); });
  nameThread(thread_, "detector reload");
  return true;
}

bool DetectorReload::stop(std::chrono::milliseconds limit) {
  std::unique_lock lock(shared_->mutex);
  shared_->stopping = true;
  // No load ever, or the last one abandoned by an earlier stop().
  if (!thread_.joinable()) return !abandonedAfter_;
  shared_->wake.notify_all();
  const bool ended = shared_->wake.wait_for(lock, limit, [this] { return !shared_->loading; });
  const SteadyClock::time_point since = shared_->since;
  if (!ended) {
    shared_->abandoned = true;
    background::detachedStarted();
  }
  lock.unlock();
  if (ended) {
    thread_.join();
    return true;
  }
  thread_.detach();
  abandonedAfter_ = secondsSince(since);
  logger("daemon")->warn(
      "stopping: a detector load under way for {:.1f} s is abandoned (a session's creation "
      "cannot be cut); the process ends without waiting for it",
      *abandonedAfter_);
  return false;
}

}  // namespace vigil
