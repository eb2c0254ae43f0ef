#include "daemon/events/presence_tracker.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace vigil {

PresenceTracker::PresenceTracker(std::string camera, PresenceSettings settings,
                                 std::vector<ZoneSpec> zones, std::vector<Polygon> masks)
    : camera_(std::move(camera)), settings_(settings), masks_(std::move(masks)) {
  settings_.minFrames = std::max(settings_.minFrames, 1);
  trackers_.reserve(zones.size() + 1);
  zoneNames_.reserve(zones.size());
  Tracker whole;
  whole.idLabel = "camera";
  whole.wholeCamera = true;
  trackers_.push_back(std::move(whole));
  for (ZoneSpec& zone : zones) {
    zoneNames_.push_back(zone.name);
    Tracker tracker;
    tracker.zone = zone.name;
    tracker.idLabel = std::move(zone.name);
    tracker.polygon = std::move(zone.polygon);
    trackers_.push_back(std::move(tracker));
  }
  // Enough for a crowded frame; more only grows the vector once.
  candidates_.reserve(32);
}

void PresenceTracker::observe(const TrackedFrame& frame, std::vector<PresenceEvent>& out) {
  candidates_.clear();
  if (frame.detections != nullptr && frame.width > 0 && frame.height > 0) {
    const auto width = static_cast<float>(frame.width);
    const auto height = static_cast<float>(frame.height);
    const float halfPixelX = 0.5F / width;
    const float halfPixelY = 0.5F / height;
    const bool tracked =
        frame.trackIds != nullptr && frame.trackIds->size() == frame.detections->size();
    for (std::size_t i = 0; i < frame.detections->size(); ++i) {
      const Detection& d = (*frame.detections)[i];
      if (d.classId != 0 || !std::isfinite(d.score) || (!tracked && d.score < settings_.minScore)) {
        continue;
      }
      const Box& b = d.box;
      if (!std::isfinite(b.x) || !std::isfinite(b.y) || !std::isfinite(b.width) ||
          !std::isfinite(b.height)) {
        continue;
      }
      float x0 = std::clamp(b.x / width, 0.0F, 1.0F);
      float y0 = std::clamp(b.y / height, 0.0F, 1.0F);
      float x1 = std::clamp(b.right() / width, 0.0F, 1.0F);
      float y1 = std::clamp(b.bottom() / height, 0.0F, 1.0F);
      if (x1 <= x0 || y1 <= y0 || (x1 - x0) * (y1 - y0) < settings_.minArea) {
        continue;
      }
      Point foot{std::clamp((x0 + x1) / 2, halfPixelX, 1.0F - halfPixelX),
                 std::clamp(y1, halfPixelY, 1.0F - halfPixelY)};
      bool masked = std::any_of(masks_.begin(), masks_.end(),
                                [&](const Polygon& mask) { return contains(mask, foot); });
      if (masked) {
        continue;
      }
      candidates_.push_back(Candidate{Box{x0, y0, x1 - x0, y1 - y0}, foot, d.score,
                                      tracked ? (*frame.trackIds)[i] : 0});
    }
  }
  for (Tracker& tracker : trackers_) {
    step(tracker, frame, out);
  }
}

void PresenceTracker::tick(std::chrono::steady_clock::time_point now,
                           std::vector<PresenceEvent>& out) {
  for (Tracker& tracker : trackers_) {
    expire(tracker, now, out);
  }
}

PresenceTracker::State PresenceTracker::state(std::string_view zone) const {
  for (const Tracker& tracker : trackers_) {
    if (tracker.zone == zone) {
      if (!tracker.present) return State{false, 0};
      return State{true, tracker.count, tracker.start, tracker.startSequence};
    }
  }
  return State{false, 0};
}

void PresenceTracker::endAll(std::vector<PresenceEvent>& out) {
  for (Tracker& tracker : trackers_) {
    if (tracker.present) {
      emit(tracker, PresenceEventType::kEnd, 0, out);
      tracker.present = false;
      tracker.count = 0;
    }
    tracker.streak = 0;
  }
}

std::optional<std::uint64_t> PresenceTracker::bestFrame() const {
  const Tracker& camera = trackers_.front();
  if (camera.present) return camera.bestFrame;
  if (camera.streak > 0) return camera.streakBestFrame;
  return std::nullopt;
}

bool PresenceTracker::counts(const Tracker& tracker, const Candidate& candidate) const {
  return tracker.wholeCamera || contains(tracker.polygon, candidate.foot);
}

void PresenceTracker::step(Tracker& tracker, const TrackedFrame& frame,
                           std::vector<PresenceEvent>& out) {
  expire(tracker, frame.monotonic, out);

  int count = 0;
  float best = 0;
  for (const Candidate& candidate : candidates_) {
    if (counts(tracker, candidate)) {
      ++count;
      best = std::max(best, candidate.score);
    }
  }
  if (count == 0) {
    tracker.streak = 0;
    return;
  }

  if (!tracker.present) {
    if (tracker.streak == 0) {
      tracker.streakStart = frame.time;
      tracker.streakStartSequence = frame.sequence;
      tracker.streakMaxScore = best;
      tracker.streakBestFrame = frame.id;
    } else if (best > tracker.streakMaxScore) {
      tracker.streakMaxScore = best;
      tracker.streakBestFrame = frame.id;
    }
    ++tracker.streak;
    tracker.streakLast = frame.monotonic;
    if (tracker.streak < settings_.minFrames) {
      return;
    }
    tracker.streak = 0;
    tracker.present = true;
    tracker.start = tracker.streakStart;
    tracker.startSequence = tracker.streakStartSequence;
    tracker.lastSeen = frame.time;
    tracker.lastSeenMonotonic = frame.monotonic;
    tracker.count = count;
    tracker.maxScore = tracker.streakMaxScore;
    tracker.bestFrame = tracker.streakBestFrame;
    ++tracker.eventCounter;
    auto startMs = std::chrono::floor<std::chrono::milliseconds>(tracker.start.time_since_epoch());
    tracker.eventId =
        fmt::format("{}-{}-{}-{}", camera_, tracker.idLabel, startMs.count(), tracker.eventCounter);
    emit(tracker, PresenceEventType::kNew, count, out);
    tracker.lastEmit = frame.monotonic;
    tracker.emittedCount = tracker.count;
    tracker.emittedMaxScore = tracker.maxScore;
    return;
  }

  tracker.lastSeen = frame.time;
  tracker.lastSeenMonotonic = frame.monotonic;
  tracker.count = count;
  if (best > tracker.maxScore) {
    tracker.maxScore = best;
    tracker.bestFrame = frame.id;
  }
  bool changed =
      tracker.count != tracker.emittedCount || tracker.maxScore > tracker.emittedMaxScore;
  if (changed && frame.monotonic - tracker.lastEmit >= settings_.updateInterval) {
    emit(tracker, PresenceEventType::kUpdate, count, out);
    tracker.lastEmit = frame.monotonic;
    tracker.emittedCount = tracker.count;
    tracker.emittedMaxScore = tracker.maxScore;
  }
}

void PresenceTracker::expire(Tracker& tracker, Monotonic now, std::vector<PresenceEvent>& out) {
  if (tracker.present && now - tracker.lastSeenMonotonic >= settings_.clearAfter) {
    emit(tracker, PresenceEventType::kEnd, 0, out);
    tracker.present = false;
    tracker.count = 0;
  }
  // A streak interrupted by a stall is not "consecutive": the person may be long gone.
  if (tracker.streak > 0 && now - tracker.streakLast >= settings_.clearAfter) {
    tracker.streak = 0;
  }
}

void PresenceTracker::emit(const Tracker& tracker, PresenceEventType type, int count,
                           std::vector<PresenceEvent>& out) const {
  PresenceEvent& event = out.emplace_back();
  event.type = type;
  event.zone = tracker.zone;
  event.eventId = tracker.eventId;
  event.start = tracker.start;
  event.count = count;
  event.maxScore = tracker.maxScore;
  event.bestFrame = tracker.bestFrame;
  if (type == PresenceEventType::kEnd) {
    event.end = tracker.lastSeen;
    return;
  }
  // New and update come from a frame with persons: its candidates are still in candidates_.
  event.boxes.reserve(static_cast<std::size_t>(count));
  for (const Candidate& candidate : candidates_) {
    if (counts(tracker, candidate)) {
      event.boxes.push_back(Detection{candidate.box, candidate.score, 0});
      if (candidate.trackId != 0) event.trackIds.push_back(candidate.trackId);
    }
  }
}

}  // namespace vigil
