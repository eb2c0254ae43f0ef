#include "daemon/events/presence_tracker.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace vigil {

PresenceTracker::PresenceTracker(std::string camera, PresenceSettings settings,
                                 std::vector<ZoneSpec> zones, std::vector<Polygon> masks)
    : camera_(std::move(camera)), settings_(settings), masks_(std::move(masks)) {
  settings_.minFrames = std::max(settings_.minFrames, 1);
  areas_.reserve(zones.size() + 1);
  zoneNames_.reserve(zones.size());
  areas_.emplace_back(camera_, settings_);
  for (ZoneSpec& zone : zones) {
    zoneNames_.push_back(zone.name);
    areas_.emplace_back(camera_, std::move(zone.name), std::move(zone.polygon), settings_);
  }
  // Enough for a crowded frame; more only grows the vector once.
  candidates_.reserve(32);
}

void PresenceTracker::observe(const TrackedFrame& frame, std::vector<PresenceEvent>& out) {
  findCandidates(frame);
  for (ZonePresence& area : areas_) {
    area.observe(frame, candidates_, out);
  }
}

void PresenceTracker::findCandidates(const TrackedFrame& frame) {
  candidates_.clear();
  if (frame.detections == nullptr || frame.width <= 0 || frame.height <= 0) return;
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
    const Point foot = standingPoint(x0, y0, x1, y1, Point{halfPixelX, halfPixelY});
    bool masked = std::any_of(masks_.begin(), masks_.end(),
                              [&](const Polygon& mask) { return contains(mask, foot); });
    if (masked) {
      continue;
    }
    candidates_.push_back(PresenceCandidate{Box{x0, y0, x1 - x0, y1 - y0}, foot, d.score,
                                            tracked ? (*frame.trackIds)[i] : 0});
  }
}

void PresenceTracker::tick(std::chrono::steady_clock::time_point now,
                           std::vector<PresenceEvent>& out) {
  for (ZonePresence& area : areas_) {
    area.expire(now, out);
  }
}

PresenceTracker::State PresenceTracker::state(std::string_view zone) const {
  for (const ZonePresence& area : areas_) {
    if (area.zone() == zone) return area.state();
  }
  return State{false, 0};
}

void PresenceTracker::endAll(std::vector<PresenceEvent>& out) {
  for (ZonePresence& area : areas_) {
    area.endAll(out);
  }
}

}  // namespace vigil
