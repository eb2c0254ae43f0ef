#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "daemon/capture/camera/camera.h"
#include "daemon/capture/camera/picture_stream.h"
#include "daemon/pipeline/scheduler.h"
#include "daemon/settings/settings.h"

namespace vigil {

// The cameras the daemon runs, by name: starts the enabled ones, each feeding the scheduler
// through its CameraFeed (motion gate, latest-frame slot), winds them down side by side,
// and applies a reloaded camera list (a camera whose settings changed restarts; the others run
// on untouched).
//
// Threads: the control (io_context) thread only. Borrows the scheduler, which outlives it.
class CameraSet {
 public:
  struct Hooks {
    // A camera about to start (its thread not yet running): register its metrics, its view.
    // `channel`: its end of the scheduler, with its counters; `pictures`: its picture stream
    // (picture_source), nullptr without one.
    std::function<void(const std::string& name, const Camera& camera,
                       const std::shared_ptr<CameraChannel>& channel,
                       const std::shared_ptr<PictureStream>& pictures)>
        starting;
    // A camera stopped and gone: take away what `starting` added.
    std::function<void(const std::string& name)> removed;
  };
  // What apply() did, for the reload's log line.
  struct Changes {
    int restarted = 0;
    int added = 0;
    int removed = 0;
  };

  CameraSet(Scheduler& scheduler, Hooks hooks);
  ~CameraSet();

  // Starts the camera (after the capture thread a stop left behind for it, if any), or logs
  // that it is disabled.
  void start(const CameraConfig& config);
  // `next`: the reloaded camera list; `running`: the one in force until now.
  Changes apply(const std::vector<CameraConfig>& next, const std::vector<CameraConfig>& running);
  // Every camera asked to stop first, then each joined; they stay listed (for the summary).
  void stopAll();

  // How long a stop (a reload's restart, the daemon's end) waits for the capture threads; one
  // that has not ended by then is left behind (Camera::stopBy): a hung read stalls neither the
  // control thread nor the stop.
  static constexpr std::chrono::milliseconds kStopLimit{1000};

  const std::map<std::string, CameraPtr>& cameras() const { return cameras_; }
  // The camera's picture stream's capture (picture_source); nullptr without one.
  const Camera* pictureCamera(const std::string& name) const;
  std::size_t size() const { return cameras_.size(); }

 private:
  Scheduler& scheduler_;
  Hooks hooks_;
  // The camera and its picture stream's capture (both start and stop together) stops by
  // `deadline`; a thread that does not end by then is kept for the camera's next start.
  void stopBy(const std::string& name, SteadyClock::time_point deadline);
  // Asks the camera and its picture stream's capture to stop.
  void requestStop(const std::string& name);
  // Starts `camera` after the thread a stop left behind for it (by its config's name: the
  // camera's, or "<name>/picture" for its picture stream), if any.
  void startAfterLeftBehind(Camera& camera);
  // Stops `camera` by `deadline`; a thread that does not end by then is kept for its next start.
  void stopKeepingLeftBehind(Camera& camera, SteadyClock::time_point deadline);

  std::map<std::string, CameraPtr> cameras_;
  std::map<std::string, CameraPtr> pictures_;  // by camera name: picture streams' captures
  // By camera name (and "<name>/picture"): capture threads a stop left behind, until the camera
  // starts again.
  std::map<std::string, std::shared_ptr<Camera::ThreadEnd>> leftBehind_;
};

}  // namespace vigil
