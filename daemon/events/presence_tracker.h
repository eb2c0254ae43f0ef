#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/events/presence_event.h"
#include "daemon/events/zone_presence.h"
#include "daemon/settings/zones.h"
#include "detector/box.h"

namespace vigil {

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
  using State = ZonePresence::State;

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
  std::optional<std::uint64_t> bestFrame() const { return areas_.front().bestFrame(); }

  // `zone` empty: the whole camera. An unknown zone reads as absent.
  State state(std::string_view zone = {}) const;
  // The configured zones, in order (without the whole-camera tracker).
  const std::vector<std::string>& zoneNames() const { return zoneNames_; }
  const std::string& camera() const { return camera_; }

 private:
  // The frame's detections that count, zones aside, into candidates_.
  void findCandidates(const TrackedFrame& frame);

  std::string camera_;
  PresenceSettings settings_;
  std::vector<Polygon> masks_;
  std::vector<ZonePresence> areas_;  // [0] the whole camera, then the zones
  std::vector<std::string> zoneNames_;
  std::vector<PresenceCandidate> candidates_;  // reused for every frame
};

}  // namespace vigil
