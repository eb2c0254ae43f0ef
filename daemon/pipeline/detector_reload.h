#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "daemon/pipeline/backend_status.h"
#include "daemon/pipeline/detector_loading.h"
#include "daemon/pipeline/inference_worker.h"
#include "daemon/settings/settings.h"

namespace vigil {

// A SIGHUP that changes the detector section: the new detector loads on a thread of its own,
// never on the control thread (which answers /healthz and /metrics and pings the watchdog
// meanwhile), and is swapped into the worker when ready.
//
// Side by side (CPU backends): the frames go on with the old detector while the new one
// loads; a failed load leaves the old one running. One at a time (either section may hold an
// NPU session, and a process may hold only one: RyzenAI-SW#402): inference stops, the old
// detector is released, the new one opens; when it does not, the old section is loaded again
// (retried every 5 s until it is, or until stop()). Never left without a detector by a bad
// section.
//
// A stop does not wait for a load that does not end: session creation is one call that cannot
// be cut (an NPU compile takes minutes, a model on a hung file system forever). stop() waits
// `limit` at most; a load still under way then is abandoned: its thread runs on detached and,
// from the stop on, never touches the worker or calls `done`; it is counted as detached work
// (foundation/background_work.h), and the process then ends with std::_Exit (runDaemon).
//
// Threads: begin() and stop() on the control thread; `done` on the loader thread (it posts).
class DetectorReload {
 public:
  struct Outcome {
    bool applied = false;                         // the new section's detector runs
    DetectorConfig running;                       // the section whose detector runs now
    std::string error;                            // why the new one did not load (applied false)
    std::optional<BackendStatus::Facts> backend;  // of the detector now running; none: unchanged
    double loadSeconds = 0;                       // the new detector's load, successful or not
  };
  using Loader = std::function<Expected<LoadedDetector>(const DetectorConfig&)>;
  using Done = std::function<void(Outcome)>;
  static constexpr std::chrono::milliseconds kStopWait{500};

  DetectorReload(InferenceWorker& worker, Done done, Loader loader = loadDetector);
  ~DetectorReload() { stop(); }
  DetectorReload(const DetectorReload&) = delete;
  DetectorReload& operator=(const DetectorReload&) = delete;

  // Starts loading `next` in place of `running`; false (nothing started) while a load is
  // under way or after stop().
  bool begin(DetectorConfig next, DetectorConfig running);
  // Ends the retries of the old section and waits up to `limit` for a load under way; true when
  // none is left, false when one was abandoned (how long it had run: abandonedAfter()).
  bool stop(std::chrono::milliseconds limit = kStopWait);
  // How long the abandoned load had run at the stop; nullopt when none was.
  std::optional<double> abandonedAfter() const { return abandonedAfter_; }

 private:
  // What the loader thread shares with this object; it outlives an abandoned load's thread.
  struct Shared {
    std::mutex mutex;
    std::condition_variable wake;
    bool stopping = false;  // from here on the thread touches neither worker nor done
    bool loading = false;
    bool abandoned = false;           // by stop(): the thread's end is counted as detached work's
    SteadyClock::time_point since{};  // the load under way began
  };
  class Job;

  InferenceWorker& worker_;
  Done done_;
  Loader loader_;
  std::shared_ptr<Shared> shared_ = std::make_shared<Shared>();
  std::optional<double> abandonedAfter_;
  std::thread thread_;
};

}  // namespace vigil
