#pragma once

#include <vector>

#include "detector/box.h"
#include "detector/track/byte_tracker.h"

namespace vigil {

// What the floors above tell a camera's pipeline once its detections are understood (the events
// floor's ResultPath, on the control thread, after each result and tick): whether a person is
// there, which the camera's motion gate reads on the capture thread (every frame goes to the
// detector while one is), and where the persons are, around which the camera's next detection
// on regions looks. The pipeline owns this interface and CameraChannel implements it: events
// tells the pipeline through it instead of writing into another floor's counters.
class DetectionFeedback {
 public:
  // What the detector last said about persons on the camera.
  enum class Person {
    kNone,     // nobody present
    kPresent,  // an event is open, but the latest detected frame showed nobody: full rate
    kSeen,     // the latest detected frame showed a person
  };

  virtual ~DetectionFeedback() = default;

  virtual void tellPerson(Person person) = 0;
  // A tracked camera's tracks after its latest frame (a lost one at its prediction).
  virtual void tellTracks(const std::vector<Track>& tracks) = 0;
  // An untracked camera's persons in its latest frame.
  virtual void tellPersons(const std::vector<Detection>& persons) = 0;
};

}  // namespace vigil
