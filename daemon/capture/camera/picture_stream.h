#pragma once

#include <atomic>
#include <mutex>
#include <optional>
#include <string>

#include "daemon/capture/camera/frame_sink.h"
#include "daemon/settings/settings.h"

namespace vigil {

// The CameraConfig a camera's picture stream (picture_source) is captured with: the camera's
// settings with the picture source's location and size, no motion gate and no calibration
// samples, picturesOnly (an H.264 or H.265 stream nobody watches decodes one keyframe in 10 s);
// named "<camera>/picture" in the log.
CameraConfig pictureCameraConfig(const CameraConfig& camera);

// Where a camera's picture stream goes: the full-size pictures people see (the page, latest.jpg,
// the MJPEG stream, snapshots), captured beside the small detect stream. Nothing is detected on
// them. Only the newest picture is kept, as it arrived (CapturedPicture: not decoded until taken).
// While nobody wants its pictures, the source is told to decode keyframes only (an H.264 or H.265
// picture stream then decodes one keyframe in 10 s, keeping the rest since the last keyframe for
// an instant replay when somebody looks: FfmpegReader::setPicturesOnly); want() keeps every
// picture decoded for kWantedFor: a viewer of the page or the stream, and, with MQTT snapshots
// on, a person in view.
// Threads: the FrameSink calls from the capture thread; want(), take() and the accessors from
// the control thread. Shared by the picture camera and the camera's view.
class PictureStream final : public FrameSink {
 public:
  // How long one want() keeps every picture decoded: a viewer asks at least at the detection
  // rate, an event at every detected frame with a person.
  static constexpr std::chrono::seconds kWantedFor{3};

  explicit PictureStream(std::string camera);

  CameraCounters& counters() override { return counters_; }
  const CameraCounters& counters() const { return counters_; }
  // Its figure for /metrics: vigil_camera_picture_stream_up. Any thread.
  void report(FigureWriter& out) const;
  void attach() override {}
  void detach() override;  // the kept picture goes back to its pool
  bool admit(const CapturedPicture& /*picture*/, SteadyClock::time_point /*captured*/) override {
    return true;
  }
  void offer(FrameHandle frame) override;
  bool keyframesOnly() const override;

  // Somebody wants full pictures now (a viewer, an open event's snapshot).
  void want(SteadyClock::time_point now);
  // A detected frame showed a person: want() when snapshots are published at full size
  // (wantedWhilePersonInView: MQTT snapshots on); otherwise an event's snapshot is the picture
  // stream's picture when one is fresh, else the detected frame.
  void personInView(SteadyClock::time_point now) {
    if (wantedWhilePersonInView_) want(now);
  }
  void setWantedWhilePersonInView(bool wanted) { wantedWhilePersonInView_ = wanted; }
  // How far apart in time the picture shown and the frame detected may be: farther, and the
  // boxes would be drawn where the persons are not (a picture stream decoding keyframes only
  // has pictures up to a keyframe interval old).
  static constexpr std::chrono::milliseconds kMaxApart{500};

  // The newest picture, into `into` (its compressed bytes or FFmpeg's reference, no pixels),
  // when the stream is up, its picture was captured within kMaxApart of `detected` (the
  // detected frame's capture time) and has the shape of `detectSize`: true. False otherwise: the
  // caller shows the detected frame itself. A stream whose shape differs is said once in the
  // log (and again after it matched once more) and refused() says why.
  bool take(cv::Size detectSize, SteadyClock::time_point detected, CapturedPicture& into);
  // Why the pictures are not used although they come (their shape); empty when they are.
  std::string refused() const;
  // The size of its newest picture; empty before the first.
  cv::Size size() const;

 private:
  std::string camera_;
  CameraCounters counters_;
  mutable std::mutex mutex_;  // guards latest_ and refused_
  std::optional<FrameHandle> latest_;
  std::string refused_;
  std::atomic<SteadyClock::rep> wantedUntil_{0};  // SteadyClock ticks
  std::atomic<bool> wantedWhilePersonInView_{false};
};

}  // namespace vigil
