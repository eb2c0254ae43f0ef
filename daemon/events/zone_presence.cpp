#include "daemon/events/zone_presence.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace vigil {

ZonePresence::ZonePresence(const std::string& camera, const PresenceSettings& settings)
    : idPrefix_(camera + "-camera"), wholeCamera_(true), settings_(settings) {}

ZonePresence::ZonePresence(const std::string& camera, std::string zone, Polygon polygon,
                           const PresenceSettings& settings)
    : zone_(std::move(zone)),
      idPrefix_(camera + "-" + zone_),
      polygon_(std::move(polygon)),
      wholeCamera_(false),
      settings_(settings) {}

bool ZonePresence::counts(const PresenceCandidate& candidate) const {
  return wholeCamera_ || contains(polygon_, candidate.foot);
}

ZonePresence::State ZonePresence::state() const {
  if (!present_) return State{false, 0};
  return State{true, count_, start_, startSequence_};
}

std::optional<std::uint64_t> ZonePresence::bestFrame() const {
  if (present_) return bestFrame_;
  if (streak_ > 0) return streakBestFrame_;
  return std::nullopt;
}

void ZonePresence::observe(const TrackedFrame& frame,
                           const std::vector<PresenceCandidate>& candidates,
                           std::vector<PresenceEvent>& out) {
  expire(frame.monotonic, out);

  int count = 0;
  float best = 0;
  for (const PresenceCandidate& candidate : candidates) {
    if (counts(candidate)) {
      ++count;
      best = std::max(best, candidate.score);
    }
  }
  if (count == 0) {
    streak_ = 0;
    return;
  }
  if (present_) {
    follow(frame, count, best, candidates, out);
  } else if (extendStreak(frame, best)) {
    open(frame, count, candidates, out);
  }
}

bool ZonePresence::extendStreak(const TrackedFrame& frame, float best) {
  if (streak_ == 0) {
    streakStart_ = frame.time;
    streakStartSequence_ = frame.sequence;
    streakMaxScore_ = best;
    streakBestFrame_ = frame.id;
  } else if (best > streakMaxScore_) {
    streakMaxScore_ = best;
    streakBestFrame_ = frame.id;
  }
  ++streak_;
  streakLast_ = frame.monotonic;
  return streak_ >= settings_.minFrames;
}

void ZonePresence::open(const TrackedFrame& frame, int count,
                        const std::vector<PresenceCandidate>& candidates,
                        std::vector<PresenceEvent>& out) {
  streak_ = 0;
  present_ = true;
  start_ = streakStart_;
  startSequence_ = streakStartSequence_;
  lastSeen_ = frame.time;
  lastSeenMonotonic_ = frame.monotonic;
  count_ = count;
  maxScore_ = streakMaxScore_;
  bestFrame_ = streakBestFrame_;
  ++eventCounter_;
  auto startMs = std::chrono::floor<std::chrono::milliseconds>(start_.time_since_epoch());
  eventId_ = fmt::format("{}-{}-{}", idPrefix_, startMs.count(), eventCounter_);
  emit(PresenceEventType::kNew, count, candidates, out);
  emitted(frame.monotonic);
}

void ZonePresence::follow(const TrackedFrame& frame, int count, float best,
                          const std::vector<PresenceCandidate>& candidates,
                          std::vector<PresenceEvent>& out) {
  lastSeen_ = frame.time;
  lastSeenMonotonic_ = frame.monotonic;
  count_ = count;
  if (best > maxScore_) {
    maxScore_ = best;
    bestFrame_ = frame.id;
  }
  bool changed = count_ != emittedCount_ || maxScore_ > emittedMaxScore_;
  if (changed && frame.monotonic - lastEmit_ >= settings_.updateInterval) {
    emit(PresenceEventType::kUpdate, count, candidates, out);
    emitted(frame.monotonic);
  }
}

void ZonePresence::emitted(Monotonic at) {
  lastEmit_ = at;
  emittedCount_ = count_;
  emittedMaxScore_ = maxScore_;
}

void ZonePresence::expire(Monotonic now, std::vector<PresenceEvent>& out) {
  if (present_ && now - lastSeenMonotonic_ >= settings_.clearAfter) {
    emit(PresenceEventType::kEnd, 0, {}, out);
    present_ = false;
    count_ = 0;
  }
  // A streak interrupted by a stall is not "consecutive": the person may be long gone.
  if (streak_ > 0 && now - streakLast_ >= settings_.clearAfter) {
    streak_ = 0;
  }
}

void ZonePresence::endAll(std::vector<PresenceEvent>& out) {
  if (present_) {
    emit(PresenceEventType::kEnd, 0, {}, out);
    present_ = false;
    count_ = 0;
  }
  streak_ = 0;
}

void ZonePresence::emit(PresenceEventType type, int count,
                        const std::vector<PresenceCandidate>& candidates,
                        std::vector<PresenceEvent>& out) const {
  PresenceEvent& event = out.emplace_back();
  event.type = type;
  event.zone = zone_;
  event.eventId = eventId_;
  event.start = start_;
  event.count = count;
  event.maxScore = maxScore_;
  event.bestFrame = bestFrame_;
  if (type == PresenceEventType::kEnd) {
    event.end = lastSeen_;
    return;
  }
  // New and update come from a frame with persons: its candidates.
  event.boxes.reserve(static_cast<std::size_t>(count));
  for (const PresenceCandidate& candidate : candidates) {
    if (counts(candidate)) {
      event.boxes.push_back(Detection{candidate.box, candidate.score, 0});
      if (candidate.trackId != 0) event.trackIds.push_back(candidate.trackId);
    }
  }
}

}  // namespace vigil
