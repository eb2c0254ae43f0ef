#include "daemon/events/frame_presence.h"

namespace vigil {

void FramePresence::observe(PresenceTracker& tracker, const ObservedFrame& frame,
                            std::vector<PresenceEvent>& out) {
  if (frame.persons == nullptr) {
    tracker.observe(TrackedFrame{frame.captureMonotonic, frame.captureTime, frame.sequence,
                                 frame.id, frame.width, frame.height, frame.detections},
                    out);
    return;
  }
  trackedBoxes_.clear();
  trackIds_.clear();
  for (const TrackedPerson& p : *frame.persons) {
    trackedBoxes_.push_back(Detection{p.box, p.score, 0});
    trackIds_.push_back(p.id);
  }
  tracker.observe(TrackedFrame{frame.captureMonotonic, frame.captureTime, frame.sequence, frame.id,
                               frame.width, frame.height, &trackedBoxes_, &trackIds_},
                  out);
}

}  // namespace vigil
