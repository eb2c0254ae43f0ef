#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "daemon/observe/metrics.h"
#include "daemon/pipeline/camera_view.h"
#include "daemon/pipeline/inference_worker.h"
#include "daemon/publish/event_publisher.h"

namespace vigil {

// What happens to one inference result, camera by camera: the publisher hears the frame
// (presence events, MQTT), the camera's motion gate hears whether a person is there, the stage
// histograms and the camera's latency window are fed, and the camera's view keeps the frame
// for the status page. Between results, tick() ages what time alone changes (rates, the gate's
// view of a presence event that ends by clear_after, the detector time gating saved).
//
// The place a per-camera step of the result (tracking, say) plugs into: onResult().
//
// Threads: the control (io_context) thread only; results reach it through asio::post from the
// inference worker. Borrows the publisher, which outlives it.
class ResultPath {
 public:
  // The histograms every result feeds (observe/daemon_metrics.h makes them).
  struct StageHistograms {
    std::shared_ptr<Histogram> captureToStart;
    std::shared_ptr<Histogram> preprocess;
    std::shared_ptr<Histogram> inference;
    std::shared_ptr<Histogram> postprocess;
    std::shared_ptr<Histogram> publish;
  };

  ResultPath(EventPublisher& publisher, StageHistograms stages);

  // A camera starts (or restarts after a reload): its view starts empty. The view stays where
  // it is until removeCamera().
  const CameraView& addCamera(const std::string& name, std::shared_ptr<CameraChannel> channel,
                              std::shared_ptr<Histogram> captureToPublish);
  void removeCamera(const std::string& name);

  // A result of a camera that was removed meanwhile (a reload) is dropped.
  void onResult(const FrameResult& result);
  // Every presence tick (about 4 per second).
  void tick(SteadyClock::time_point now);

  // nullptr for a camera that is not running.
  const CameraView* view(const std::string& name) const;

 private:
  // Hands the frame to the publisher; returns whether it showed a person.
  bool publish(const FrameResult& r, CameraView& view, SteadyClock::time_point received,
               std::chrono::system_clock::time_point now);
  void observeStages(const FrameResult& r, CameraView& view, SteadyClock::time_point received);
  void updateRates(CameraView& view, SteadyClock::time_point now);
  // Tells the camera's motion gate what the detector says of persons (MotionGate::Person);
  // `presence`: the camera's presence state now (EventPublisher::state).
  void tellGate(CameraView& view, const std::optional<PresenceTracker::State>& presence);

  EventPublisher& publisher_;
  StageHistograms stages_;
  std::map<std::string, CameraView> views_;
  double meanDetectorSeconds_ = 0;  // moving average over recent frames, all cameras
};

}  // namespace vigil
