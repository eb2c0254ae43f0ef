#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "daemon/events/presence_event.h"
#include "daemon/settings/zones.h"
#include "detector/box.h"

namespace vigil {

// A detection that passed the zone-independent rules (PresenceTracker's), in normalized
// coordinates.
struct PresenceCandidate {
  Box box;
  Point foot;  // where the person stands: the box's bottom centre
  float score;
  std::uint64_t trackId;  // 0: untracked
};

// The presence of one area of a camera: the whole camera's, or one zone's, state machine
// (presence_tracker.h gives its rules): the streak towards `new`, the open event with its
// updates, and its `end`; event ids `<camera>-<zone or "camera">-<start unix ms>-<n>`.
// Not thread-safe: its PresenceTracker's thread.
class ZonePresence {
 public:
  using TimePoint = std::chrono::system_clock::time_point;  // wall: for messages
  using Monotonic = std::chrono::steady_clock::time_point;  // every comparison

  struct State {
    bool present;
    int count;  // while present the count of the latest frame with a person, so present
                // implies count >= 1 also during the clearAfter grace period; 0 when absent
    // While present: the open event's start (time and sequence of the streak's first frame).
    std::chrono::system_clock::time_point start{};
    std::uint64_t startSequence = 0;
  };

  // The whole camera: every candidate counts. `settings.minFrames` is at least 1.
  ZonePresence(const std::string& camera, const PresenceSettings& settings);
  // The zone `zone` of `polygon`: the candidates standing in it count.
  ZonePresence(const std::string& camera, std::string zone, Polygon polygon,
               const PresenceSettings& settings);

  // A frame with the camera's `candidates` (those of this area count): appends the events it
  // causes to `out`, after those of the time since the last one (expire()).
  void observe(const TrackedFrame& frame, const std::vector<PresenceCandidate>& candidates,
               std::vector<PresenceEvent>& out);
  // Ends the event, and forgets the streak, when clearAfter has passed by `now`.
  void expire(Monotonic now, std::vector<PresenceEvent>& out);
  // Ends the event now (end = its last frame with a person) and forgets the streak.
  void endAll(std::vector<PresenceEvent>& out);

  State state() const;
  // The frame with the highest counted score of the open event or of the streak towards one.
  std::optional<std::uint64_t> bestFrame() const;
  const std::string& zone() const { return zone_; }

 private:
  bool counts(const PresenceCandidate& candidate) const;
  // The streak towards `new` goes on with a frame whose best score is `best`: true once it has
  // minFrames frames.
  bool extendStreak(const TrackedFrame& frame, float best);
  // The streak became an event: `new`.
  void open(const TrackedFrame& frame, int count, const std::vector<PresenceCandidate>& candidates,
            std::vector<PresenceEvent>& out);
  // A frame with persons while present: an `update` when it says something new, not too soon.
  void follow(const TrackedFrame& frame, int count, float best,
              const std::vector<PresenceCandidate>& candidates, std::vector<PresenceEvent>& out);
  void emit(PresenceEventType type, int count, const std::vector<PresenceCandidate>& candidates,
            std::vector<PresenceEvent>& out) const;
  void emitted(Monotonic at);

  std::string zone_;      // empty for the whole camera
  std::string idPrefix_;  // `<camera>-<zone or "camera">`
  Polygon polygon_;
  bool wholeCamera_;
  PresenceSettings settings_;
  std::uint64_t eventCounter_ = 0;
  // Streak towards `new` while absent.
  int streak_ = 0;
  TimePoint streakStart_{};
  std::uint64_t streakStartSequence_ = 0;
  Monotonic streakLast_{};
  float streakMaxScore_ = 0;
  std::uint64_t streakBestFrame_ = 0;
  // The current event while present.
  bool present_ = false;
  std::string eventId_;
  TimePoint start_{};
  std::uint64_t startSequence_ = 0;
  TimePoint lastSeen_{};  // the end an event reports
  Monotonic lastSeenMonotonic_{};
  Monotonic lastEmit_{};
  int count_ = 0;
  float maxScore_ = 0;
  std::uint64_t bestFrame_ = 0;
  int emittedCount_ = 0;
  float emittedMaxScore_ = 0;
};

}  // namespace vigil
