#include "daemon/events/person_tracks.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace vigil {

std::string_view zoneEventName(ZoneEventType type) {
  switch (type) {
    case ZoneEventType::kEnter:
      return "enter";
    case ZoneEventType::kLeave:
      return "leave";
    case ZoneEventType::kLoiter:
      return "loiter";
  }
  return "?";
}

bool confirmedByScores(std::span<const float> scores, float threshold) {
  if (scores.size() > kConfirmationScores) scores = scores.last(kConfirmationScores);
  std::array<float, kConfirmationScores> sorted{};  // zeros: the padding
  const std::size_t n = std::max<std::size_t>(scores.size(), 3);
  std::copy(scores.begin(), scores.end(), sorted.begin());
  std::sort(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(n));
  const float median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  return median >= threshold;
}

bool ScoreConfirmation::observe(float score, float threshold) {
  if (confirmed_) return true;
  if (scores_.size() == kConfirmationScores) scores_.erase(scores_.begin());
  scores_.push_back(score);
  confirmed_ = confirmedByScores(scores_, threshold);
  if (confirmed_) scores_ = {};  // not needed again
  return confirmed_;
}

PersonTrackingSettings personTrackingSettings(const TrackingSettings& tracking,
                                              const PresenceSettings& presence) {
  const float minScore = presence.minScore;
  PersonTrackingSettings s;
  s.tracker.lostAfterSeconds = std::chrono::duration<double>(tracking.lostAfter).count();
  // A person detected at min_score counts, so a track may start there (ByteTrack's det_thresh,
  // 0.6, would leave a person scored 0.5 to 0.6 on every frame uncounted).
  s.tracker.newTrackScore = std::min(s.tracker.newTrackScore, minScore);
  s.stationary = tracking.stationary;
  s.minScore = minScore;
  s.confirmScore = presence.confirmScore;
  return s;
}

namespace {

// Where a person stands, normalized: the bottom centre of the box's part inside the frame, half a
// pixel inside its edges (standingPoint, the rule presence uses too).
Point footOf(const Box& b, int width, int height) {
  const auto w = static_cast<float>(width);
  const auto h = static_cast<float>(height);
  return standingPoint(b.x / w, b.y / h, b.right() / w, b.bottom() / h, Point{0.5F / w, 0.5F / h});
}

}  // namespace

PersonTracks::PersonTracks(PersonTrackingSettings settings, std::vector<TrackZone> zones,
                           std::vector<Polygon> masks, const std::vector<LineSpec>& lines)
    : settings_(settings),
      zones_(std::move(zones)),
      masks_(std::move(masks)),
      lineSpecs_(lines),
      tracker_(settings.tracker) {}

void PersonTracks::fitLines(int width, int height) {
  if (width <= 0 || height <= 0 || (width == linesWidth_ && height == linesHeight_)) return;
  linesWidth_ = width;
  linesHeight_ = height;
  lines_.clear();
  for (const LineSpec& l : lineSpecs_) {
    std::vector<LinePoint> pixels;
    for (const LinePoint& p : l.points) pixels.push_back({p.x * width, p.y * height});
    if (auto line = CountingLine::make(std::move(pixels), l.band, l.minFrames)) {
      lines_.emplace_back(l.name, std::move(*line));
    }
  }
  for (State& s : states_) s.lineStates.assign(lines_.size(), LineTrackState{});
}

void PersonTracks::update(double time, int width, int height, const std::vector<Detection>& persons,
                          std::vector<ZoneEvent>& events) {
  fitLines(width, height);
  const std::vector<Detection>* input = &persons;
  if (!masks_.empty() && width > 0 && height > 0) {
    unmasked_.clear();
    for (const Detection& d : persons) {
      const Point foot = footOf(d.box, width, height);
      if (std::none_of(masks_.begin(), masks_.end(),
                       [&](const Polygon& mask) { return contains(mask, foot); })) {
        unmasked_.push_back(d);
      }
    }
    input = &unmasked_;
  }
  const std::vector<Track>& tracks = tracker_.update(time, *input);
  endedDurations_.clear();
  crossings_.clear();
  endTracks(time, events);
  persons_.clear();
  for (const Track& t : tracks) {
    State& s = stateOf(t);
    if (!s.person && t.matched) s.person = becomesPerson(s, t);
    if (!t.confirmed || !s.person) continue;
    if (!s.reported) {
      s.reported = true;
      ++personsStarted_;
    }
    s.firstSeen = t.firstSeen;
    s.lastSeen = t.lastSeen;
    if (t.matched) {
      updateStationary(s, t, time);
      updateZones(s, t, time, width, height, events);
      updateLines(s, t, time);
    }
    // Reported first on its track's second frame, a person is reported first here (a track is a
    // person only once confirmed): its start goes to the tracks file as to its lines.
    std::optional<Box> start;
    if (reportedFirstOnItsSecondFrame(t)) start = t.startBox;
    TrackedPerson p{t.id,      t.box,        t.score, t.firstSeen, t.lastSeen,
                    t.matched, s.stationary, {},      start};
    for (std::size_t z = 0; z < zones_.size(); ++z) {
      if (s.visits[z].entered) p.zones.push_back(zones_[z].name);
    }
    persons_.push_back(std::move(p));
  }
}

bool PersonTracks::becomesPerson(State& s, const Track& t) const {
  if (settings_.confirmScore <= 0) return t.score >= settings_.minScore;
  return s.confirmation.observe(t.score, settings_.confirmScore);
}

PersonTracks::State& PersonTracks::stateOf(const Track& t) {
  auto it = std::lower_bound(states_.begin(), states_.end(), t.id,
                             [](const State& s, std::uint64_t id) { return s.id < id; });
  if (it != states_.end() && it->id == t.id) return *it;
  State s;
  s.id = t.id;
  s.anchorTime = t.firstSeen;
  s.anchorX = t.box.x + t.box.width / 2;
  s.anchorY = t.box.y + t.box.height / 2;
  s.visits.resize(zones_.size());
  s.lineStates.resize(lines_.size());
  return *states_.insert(it, std::move(s));
}

// The feet in the frame's pixels, as the lines are: a detected frame's box only, so a
// prediction never crosses a line.
void PersonTracks::updateLines(State& s, const Track& t, double time) {
  for (std::size_t l = 0; l < lines_.size(); ++l) {
    if (auto counted = observeTrack(lines_[l].second, s.lineStates[l], t)) {
      crossings_.push_back({lines_[l].first, *counted, s.id, time, t.box, t.score});
    }
  }
}

void PersonTracks::updateStationary(State& s, const Track& t, double time) {
  const float x = t.box.x + t.box.width / 2;
  const float y = t.box.y + t.box.height / 2;
  const double moved = std::hypot(x - s.anchorX, y - s.anchorY);
  if (moved > settings_.stationary.maxMoveFraction * std::max(1.0F, t.box.height)) {
    s.anchorX = x;
    s.anchorY = y;
    s.anchorTime = time;
    s.stationary = false;
  } else if (time - s.anchorTime >= settings_.stationary.afterSeconds) {
    s.stationary = true;
  }
}

void PersonTracks::updateZones(State& s, const Track& t, double time, int width, int height,
                               std::vector<ZoneEvent>& events) {
  if (width <= 0 || height <= 0) return;
  const Point foot = footOf(t.box, width, height);
  for (std::size_t z = 0; z < zones_.size(); ++z) {
    const TrackZone& zone = zones_[z];
    Visit& v = s.visits[z];
    if (!contains(zone.polygon, foot)) {
      if (v.entered) {
        events.push_back({ZoneEventType::kLeave, zone.name, s.id, time, time - v.enteredAt});
      }
      v = Visit{};
      continue;
    }
    ++v.framesInside;
    if (!v.entered && v.framesInside >= std::max(1, zone.minFrames)) {
      v.entered = true;
      v.enteredAt = time;
      events.push_back({ZoneEventType::kEnter, zone.name, s.id, time, 0});
    }
    if (v.entered && !v.loitered && zone.loiterAfterSeconds &&
        time - v.enteredAt >= *zone.loiterAfterSeconds) {
      v.loitered = true;
      events.push_back({ZoneEventType::kLoiter, zone.name, s.id, time, time - v.enteredAt});
    }
  }
}

// Tracks the tracker dropped leave their zones now.
void PersonTracks::endTracks(double time, std::vector<ZoneEvent>& events) {
  const std::vector<Track>& alive = tracker_.tracks();
  std::size_t kept = 0;
  for (State& s : states_) {
    if (std::none_of(alive.begin(), alive.end(), [&](const Track& t) { return t.id == s.id; })) {
      leaveZones(s, time, events);
    } else {
      if (&states_[kept] != &s) states_[kept] = std::move(s);  // no self-move
      ++kept;
    }
  }
  states_.resize(kept);
}

void PersonTracks::leaveZones(const State& s, double time, std::vector<ZoneEvent>& events) {
  for (std::size_t z = 0; z < zones_.size(); ++z) {
    const Visit& v = s.visits[z];
    if (v.entered) {
      events.push_back({ZoneEventType::kLeave, zones_[z].name, s.id, time, time - v.enteredAt});
    }
  }
  if (s.reported) endedDurations_.push_back(s.lastSeen - s.firstSeen);
}

void PersonTracks::expire(double time, std::vector<ZoneEvent>& events) {
  static const std::vector<Detection> kNobody;
  update(time, 0, 0, kNobody, events);
}

void PersonTracks::endAll(double time, std::vector<ZoneEvent>& events) {
  endedDurations_.clear();
  crossings_.clear();
  for (const State& s : states_) leaveZones(s, time, events);
  states_.clear();
  persons_.clear();
}

}  // namespace vigil
