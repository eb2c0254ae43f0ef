#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "daemon/base/metrics.h"
#include "daemon/events/camera_rates.h"
#include "daemon/events/camera_view.h"
#include "daemon/events/event_publisher.h"
#include "daemon/events/latest_picture.h"
#include "daemon/events/stage_histograms.h"
#include "daemon/events/track_recorder.h"
#include "daemon/pipeline/inference_worker.h"
#include "daemon/settings/settings.h"

namespace vigil {

// What happens to one inference result, camera by camera: detections below detector.min_score
// are set aside (the detector reports persons down to kTrackingLowScore for tracking), the
// camera's PersonTracks follows its persons on the frames' capture times, the publisher hears
// the frame (presence events counting the tracked persons, zone events, MQTT), the camera's
// motion gate hears whether a person is there, the stage histograms (StagesByBackend) and the
// camera's latency window are fed, and the camera's view keeps the frame (LatestPictures) and its
// tracks for the status page. Between results, tick() ages what time alone changes (rates and the
// detector time gating saved: CameraRates; the gate's view of a presence event that ends by
// clear_after).
//
// Threads: the control (io_context) thread only; results reach it through asio::post from the
// inference worker. Borrows the publisher, which outlives it.
class ResultPath {
 public:
  // The stage histograms (stage_histograms.h), by their older names.
  using StageHistograms = vigil::StageHistograms;
  using StageHistogramsFor = vigil::StageHistogramsFor;
  // One camera's histograms.
  struct CameraHistograms {
    std::shared_ptr<Histogram> captureToPublish;
    std::shared_ptr<Histogram> trackDuration;  // seconds each person track was seen
  };

  // `reportedScore`: detector.min_score.
  ResultPath(EventPublisher& publisher, StageHistogramsFor stages, float reportedScore);

  // A camera starts (or restarts after a reload): its view starts empty. The view stays where
  // it is until removeCamera(). `tracks`: nullptr when the camera is not tracked; `pictures`:
  // its picture stream (picture_source), nullptr without one.
  const CameraView& addCamera(const std::string& name, std::shared_ptr<CameraChannel> channel,
                              CameraHistograms histograms, std::unique_ptr<PersonTracks> tracks,
                              std::shared_ptr<PictureStream> pictures = nullptr);
  // Its tracked persons leave their zones (zone events) and its view goes.
  void removeCamera(const std::string& name);
  // `vigil run --tracks-out`: every tracked frame is recorded (nullptr: none). Borrowed.
  void setTrackRecorder(TrackRecorder* recorder) { recorder_ = recorder; }
  // Keep each camera's presence event starts (CameraView::events) for --summary-json; off
  // otherwise, so that a daemon running for months does not keep every event it ever saw.
  void keepEventStarts(bool keep) { keepEventStarts_ = keep; }
  // detector.min_score changed (a reload).
  void setReportedScore(float score) { reportedScore_ = score; }

  // A result of a camera that was removed meanwhile (a reload) is dropped.
  void onResult(const FrameResult& result);
  // Every presence tick (about 4 per second): also ends the tracks of a camera without results
  // for 2 s longer than its lost time (its file ended, it is lost).
  void tick(SteadyClock::time_point now);
  // Every tracked person leaves (zone events): the daemon stops. The views stay, untracked.
  void endTracks();

  // nullptr for a camera that is not running.
  const CameraView* view(const std::string& name) const;

 private:
  // Keeps the detections at reportedScore in view.latestDetections and runs the camera's
  // tracks on the persons (zone events into zoneEvents_).
  void track(const FrameResult& r, CameraView& view, std::chrono::system_clock::time_point capture);
  // Hands the frame (`picture`: the one people see) to the publisher; returns whether it
  // showed a person.
  bool publish(const FrameResult& r, CameraView& view, const CapturedPicture* picture,
               std::chrono::system_clock::time_point capture,
               std::chrono::system_clock::time_point now);
  void observeTrackDurations(const CameraView& view);
  // After an update at `time` (steady seconds; `wall`: the same moment in Unix seconds): the
  // ended tracks' durations and the view's persons, their times on the wall clock.
  void tracksUpdated(CameraView& view, double time, double wall);
  // The camera's tracked persons leave (zone events); it is not tracked any more.
  void endTracks(const std::string& name, CameraView& view);
  void expireTracks(const std::string& name, CameraView& view, SteadyClock::time_point now);
  // Tells the camera's pipeline (its DetectionFeedback: the motion gate reads it) what the
  // detector says of persons; `presence`: the camera's presence state now
  // (EventPublisher::state).
  void tellPerson(CameraView& view, const std::optional<PresenceTracker::State>& presence);

  EventPublisher& publisher_;
  StagesByBackend stages_;
  CameraRates rates_;
  LatestPictures pictures_;
  float reportedScore_;
  TrackRecorder* recorder_ = nullptr;
  bool keepEventStarts_ = false;
  std::map<std::string, CameraView> views_;
  std::vector<Detection> persons_;     // reused: the tracker's input
  std::vector<ZoneEvent> zoneEvents_;  // reused
};

// The camera's PersonTracks (its tracking section, presence.min_score, its zones); nullptr when
// tracking is off.
std::unique_ptr<PersonTracks> personTracksFor(const CameraConfig& camera);

}  // namespace vigil
