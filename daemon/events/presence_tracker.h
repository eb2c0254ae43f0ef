#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/settings/zones.h"
#include "detector/box.h"

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

// Turns one camera's detections into presence events, with one independent state machine for
// the whole camera and one per zone.
//
// Which detections count: classId 0 (person), score >= minScore, and after clipping the box to
// the frame, box area / frame area >= minArea, its bottom-centre point (where the person
// stands, as in Frigate) not inside any mask and, for a zone, inside the zone's polygon.
// That point is kept half a pixel inside the frame, so a person cut off by the bottom edge
// still stands in a zone drawn to that edge (on the edge itself contains() may say either).
// Boxes with no area inside the frame and non-finite boxes or scores never count; a frame
// without a valid size or detections counts nobody.
//
// Per tracker:
// - absent -> present after minFrames consecutive frames with count > 0; a frame with count 0,
//   or a gap of clearAfter or more between two such frames, restarts the streak. `new` carries
//   the start time of the streak's first frame and the max score over the streak.
// - while present, frames with count > 0 set count (the latest) and maxScore (the max). An
//   `update` goes out when count differs from, or maxScore is above, what the last event said,
//   at the first frame with count > 0 that is at least updateInterval after the last event.
//   Frames without a person never emit updates (their boxes would say nothing).
// - `end` when clearAfter or more has passed since the last frame with count > 0, found by
//   observe() (before it looks at the new frame, so a person returning after a long gap starts
//   a new streak) or tick(). end = that last frame's time, count 0, no boxes.
// - event id: `<camera>-<zone or "camera">-<start unix ms>-<n>`, n counting this tracker's
//   events from 1. The counter keeps ids of one tracker unique even when two events start in
//   the same millisecond; the start time keeps them unique across daemon restarts.
// Within one call, events come out camera tracker first, then zones in configured order.
//
// Not thread-safe: one thread (the camera's publisher) owns it. No clock of its own: durations
// (streaks, clearAfter, updateInterval) run on the frames' and tick()'s monotonic times; wall
// times only go into the events (start, end, ids), so a stepped wall clock changes no decision.
// observe() allocates only for the events it emits (and to grow its reused scratch vector, the
// first time a frame holds more than 32 persons).
class PresenceTracker {
 public:
  struct State {
    bool present;
    int count;  // while present the count of the latest frame with a person, so present
                // implies count >= 1 also during the clearAfter grace period; 0 when absent
    // While present: the open event's start (time and sequence of the streak's first frame).
    std::chrono::system_clock::time_point start{};
    std::uint64_t startSequence = 0;
  };

  PresenceTracker(std::string camera, PresenceSettings settings, std::vector<ZoneSpec> zones,
                  std::vector<Polygon> masks);

  // Appends the events this frame causes to `out`.
  void observe(const TrackedFrame& frame, std::vector<PresenceEvent>& out);
  // Ends events whose clearAfter has passed; call it periodically so an event ends when frames
  // stop arriving (camera lost, detector stalled).
  // `now` on the monotonic clock.
  void tick(std::chrono::steady_clock::time_point now, std::vector<PresenceEvent>& out);
  // Ends every open event now (end = its last frame with a person) and forgets streaks: the
  // camera is going away or its settings change.
  void endAll(std::vector<PresenceEvent>& out);

  // The sequence of the frame with the highest counted score of the whole camera's current
  // event, or of its streak towards one; nullopt when neither is open. After observe() it tells
  // whether that frame is the best so far (a snapshot worth keeping).
  std::optional<std::uint64_t> bestFrame() const;

  // `zone` empty: the whole camera. An unknown zone reads as absent.
  State state(std::string_view zone = {}) const;
  // The configured zones, in order (without the whole-camera tracker).
  const std::vector<std::string>& zoneNames() const { return zoneNames_; }
  const std::string& camera() const { return camera_; }

 private:
  using TimePoint = std::chrono::system_clock::time_point;  // wall: for messages
  using Monotonic = std::chrono::steady_clock::time_point;  // every comparison

  // A detection that passed the zone-independent rules, in normalized coordinates.
  struct Candidate {
    Box box;
    Point foot;
    float score;
    std::uint64_t trackId;  // 0: untracked
  };

  struct Tracker {
    std::string zone;     // empty for the whole camera
    std::string idLabel;  // zone name, or "camera"
    Polygon polygon;
    bool wholeCamera = false;
    std::uint64_t eventCounter = 0;
    // Streak towards `new` while absent.
    int streak = 0;
    TimePoint streakStart{};
    std::uint64_t streakStartSequence = 0;
    Monotonic streakLast{};
    float streakMaxScore = 0;
    std::uint64_t streakBestFrame = 0;
    // The current event while present.
    bool present = false;
    std::string eventId;
    TimePoint start{};
    std::uint64_t startSequence = 0;
    TimePoint lastSeen{};  // the end an event reports
    Monotonic lastSeenMonotonic{};
    Monotonic lastEmit{};
    int count = 0;
    float maxScore = 0;
    std::uint64_t bestFrame = 0;
    int emittedCount = 0;
    float emittedMaxScore = 0;
  };

  bool counts(const Tracker& tracker, const Candidate& candidate) const;
  void step(Tracker& tracker, const TrackedFrame& frame, std::vector<PresenceEvent>& out);
  void expire(Tracker& tracker, Monotonic now, std::vector<PresenceEvent>& out);
  void emit(const Tracker& tracker, PresenceEventType type, int count,
            std::vector<PresenceEvent>& out) const;

  std::string camera_;
  PresenceSettings settings_;
  std::vector<Polygon> masks_;
  std::vector<Tracker> trackers_;  // [0] the whole camera, then the zones
  std::vector<std::string> zoneNames_;
  std::vector<Candidate> candidates_;  // reused for every frame
};

}  // namespace vigil
