#pragma once

#include <cstdint>
#include <vector>

#include "daemon/events/observed_frame.h"
#include "daemon/events/presence_tracker.h"

namespace vigil {

// Runs a camera's PresenceTracker on one observed frame: on a tracked camera its tracked persons
// are who counts (so a frame that misses one keeps the count), else the frame's detections.
// Keeps its scratch vectors between frames. Threads: the control thread.
class FramePresence {
 public:
  void observe(PresenceTracker& tracker, const ObservedFrame& frame,
               std::vector<PresenceEvent>& out);

 private:
  std::vector<Detection> trackedBoxes_;  // the tracked persons as presence sees them
  std::vector<std::uint64_t> trackIds_;
};

}  // namespace vigil
