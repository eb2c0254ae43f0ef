#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "detector/box.h"

// What presence takes and gives (PresenceTracker, ZonePresence): a frame in, events out.

namespace vigil {

// One frame's detector output. `detections` (pixels, as the detector returns them) is
// borrowed for the observe() call; nullptr means none. With `trackIds` (one per detection),
// the detections are the camera's tracked persons (events/person_tracks.h), which already
// passed tracking's min_score rule: they count whatever their latest score.
struct TrackedFrame {
  TrackedFrame(std::chrono::steady_clock::time_point frameMonotonic,
               std::chrono::system_clock::time_point frameTime, std::uint64_t frameSequence,
               std::uint64_t frameId, int frameWidth, int frameHeight,
               const std::vector<Detection>* frameDetections,
               const std::vector<std::uint64_t>* frameTrackIds = nullptr)
      : monotonic(frameMonotonic),
        time(frameTime),
        sequence(frameSequence),
        id(frameId),
        width(frameWidth),
        height(frameHeight),
        detections(frameDetections),
        trackIds(frameTrackIds) {}

  // Capture time on the monotonic clock, which every duration is measured on (a wall clock
  // stepped by NTP would end or prolong events), and on the wall clock, for messages only.
  std::chrono::steady_clock::time_point monotonic;
  std::chrono::system_clock::time_point time;
  std::uint64_t sequence;  // the source's frame counter: an event's start_frame
  std::uint64_t id;        // only grows for a camera (Frame::id): an event's best frame
  int width;
  int height;
  const std::vector<Detection>* detections;
  const std::vector<std::uint64_t>* trackIds;
};

enum class PresenceEventType { kNew, kUpdate, kEnd };

struct PresenceEvent {
  PresenceEventType type;
  std::string zone;     // empty: whole camera
  std::string eventId;  // the same for the new, updates and end of one event
  std::chrono::system_clock::time_point start;  // time of the first frame of the streak
  std::optional<std::chrono::system_clock::time_point> end;  // kEnd only: last frame with one
  int count;                            // counted persons in the triggering frame; 0 for kEnd
  float maxScore;                       // highest counted score over the whole event so far
  std::vector<Detection> boxes;         // the counted persons, box normalized 0..1; empty for kEnd
  std::vector<std::uint64_t> trackIds;  // with tracking: the boxes' track ids, else empty
  std::uint64_t bestFrame;              // id of the (first) frame with maxScore
};

}  // namespace vigil
