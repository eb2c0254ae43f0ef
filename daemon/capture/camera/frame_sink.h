#pragma once

#include "daemon/capture/camera/camera_counters.h"
#include "daemon/capture/frame/frame_pool.h"
#include "daemon/capture/picture/captured_picture.h"

namespace vigil {

// Where a camera's captured frames go, and what capture is told back: implemented above capture
// (the pipeline's CameraFeed: the motion gate, then the scheduler's latest-frame slot), so that
// capture never includes the rooms that take its frames.
// Threads: admit(), offer() and keyframesOnly() from the camera's capture thread; attach() and
// detach() from whoever starts and stops the camera; counters() from anyone. Owned jointly by
// the camera and its starter: a capture thread left behind by a stop keeps it alive.
class FrameSink {
 public:
  virtual ~FrameSink() = default;

  // The camera's counters, shared with everyone who reads them.
  virtual CameraCounters& counters() = 0;
  // The capture thread starts: frames may come. detach(): it stopped; a frame still waiting is
  // dropped.
  virtual void attach() = 0;
  virtual void detach() = 0;
  // Whether this frame goes on at all (false: it goes straight back to the pool); it may look
  // at the picture (decoded small, only when needed). Called for every captured frame.
  virtual bool admit(const CapturedPicture& picture, SteadyClock::time_point captured) = 0;
  // An admitted frame, handed over.
  virtual void offer(FrameHandle frame) = 0;
  // The source may decode only its keyframes now (an idle camera under motion gating).
  virtual bool keyframesOnly() const = 0;
};

}  // namespace vigil
