#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "daemon/base/error.h"
#include "daemon/capture/frame/frame.h"

namespace vigil {

struct CameraConfig;

// What a source delivers once open, for logs and the status API.
struct SourceInfo {
  int width = 0;
  int height = 0;
  // The rate the device or container declares (0: none); not always what it delivers (FFmpeg
  // says 25 for any MJPEG stream): FrameRateProbe measures that.
  double fps = 0;
  std::string pixelFormat;  // e.g. "YUYV", "MJPG", "h264 (ffmpeg)"
  std::string description;  // driver/card or container, free text
  std::string decoder;      // who makes its pixels, e.g. "FFmpeg h264, software"
  std::string hwFallback;   // why hardware decoding, asked for, is not used (empty: n/a)
};

// The seam to a camera: a V4L2 device, a network stream or a video file.
// Ownership and threads: created, used and destroyed on its camera's capture thread only,
// except interrupt(), which the thread stopping the camera calls.
// Failure: every call returns an Error, never throws. kTimeout from read() means "no frame
// yet, the source is still there"; kUnavailable means the device or stream is gone (unplugged,
// refused, ended) and the supervisor should close() and reopen later; anything else is a
// configuration problem (kInvalidArgument, kUnsupported) or a bad frame (kInvalidData: skip
// it and read on).
class FrameSource {
 public:
  virtual ~FrameSource() = default;

  virtual Expected<SourceInfo> open() = 0;
  // Waits at most `timeout` for the next picture and writes it into `frame`.
  virtual Expected<void> read(Frame& frame, std::chrono::milliseconds timeout) = 0;
  // Releases the device or stream; open() may be called again afterwards.
  virtual void close() = 0;
  // Frames the device produced but never handed over (V4L2 sequence gaps: the driver had no
  // free buffer, or dropped them), since this source was made; not reset by close(). 0 for
  // sources without a frame counter of their own.
  virtual std::uint64_t framesLost() const { return 0; }
  // From the motion gate, on the capture thread: nobody needs every picture now (the camera is
  // idle) or again. A source whose pictures depend on each other may then decode and deliver
  // only its keyframes, and after being told to resume, deliver nothing until the next keyframe
  // (a picture decoded from references it skipped would be damaged). Sources whose pictures
  // stand alone (JPEG, YUYV) ignore it.
  virtual void setKeyframesOnly(bool /*keyframesOnly*/) {}
  // The source is skipping pictures to its next keyframe (above): a read's kTimeout then means
  // packets still come, none of them a keyframe yet (a silent stream fails its read instead),
  // so a keyframe interval longer than the stall limit is no stall.
  virtual bool skippingToKeyframe() const { return false; }
  // Called from another thread while open() or read() may be blocked in this one: makes them
  // return soon (kUnavailable) instead of waiting out their own timeouts, now and from then on.
  // Sources whose calls never block longer than the stop promise allows need not override it.
  virtual void interrupt() {}
};

}  // namespace vigil
