#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "daemon/config.h"
#include "daemon/observe/backend_status.h"
#include "daemon/pipeline/detector_loading.h"
#include "daemon/pipeline/inference_worker.h"

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

  DetectorReload(InferenceWorker& worker, Done done, Loader loader = loadDetector);
  ~DetectorReload() { stop(); }
  DetectorReload(const DetectorReload&) = delete;
  DetectorReload& operator=(const DetectorReload&) = delete;

  // Starts loading `next` in place of `running`; false (nothing started) while a load is
  // under way.
  bool begin(DetectorConfig next, DetectorConfig running);
  // Waits for a load under way (it cannot be cut: ONNX Runtime's session creation is one call)
  // and ends the retries of the old section.
  void stop();

 private:
  void sideBySide(const DetectorConfig& next, const DetectorConfig& running);
  void oneAtATime(const DetectorConfig& next, const DetectorConfig& running);
  // Loads `config` and gives it to the worker; the load's error otherwise.
  std::optional<std::string> loadInto(const DetectorConfig& config,
                                      std::optional<BackendStatus::Facts>& facts);

  InferenceWorker& worker_;
  Done done_;
  Loader loader_;
  std::atomic<bool> busy_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mutex_
  std::thread thread_;
};

}  // namespace vigil
