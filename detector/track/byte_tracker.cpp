#include "detector/track/byte_tracker.h"

#include <algorithm>

namespace vigil {

namespace {

// Keeps the entries of `list` whose flag is 0, in order.
void keepUntaken(std::vector<std::size_t>& list, const std::vector<char>& taken) {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!taken[i]) list[kept++] = list[i];
  }
  list.resize(kept);
}

// Whether a box of height `a` and one of height `b` are within `ratio` of each other (0: any).
bool heightsAgree(float a, float b, float ratio) {
  a = std::max(a, 1.0F);
  b = std::max(b, 1.0F);
  return ratio <= 0 || std::max(a, b) <= ratio * std::min(a, b);
}

// `box` grown by `scale` of its width and height on each side.
Box grown(const Box& box, float scale) {
  return {box.x - scale * box.width, box.y - scale * box.height, box.width * (1 + 2 * scale),
          box.height * (1 + 2 * scale)};
}

}  // namespace

ByteTracker::ByteTracker(ByteTrackSettings settings) : settings_(settings) {}

const std::vector<Track>& ByteTracker::update(double time,
                                              const std::vector<Detection>& detections) {
  predictTo(time);
  splitByScore(detections);
  confirmedPool_.clear();
  tentativePool_.clear();
  for (std::size_t i = 0; i < states_.size(); ++i) {
    (states_[i].track.confirmed ? confirmedPool_ : tentativePool_).push_back(i);
  }
  // 1. High scores with every confirmed track, tracked or lost.
  associate(confirmedPool_, high_, detections, settings_.matchIou, settings_.fuseScore, time);
  // 2. Low scores with the established tracks left that were tracked until now (not those
  // already lost).
  leftover_.clear();
  for (std::size_t i : confirmedPool_) {
    if (states_[i].tracking && states_[i].track.established) leftover_.push_back(i);
  }
  associate(leftover_, low_, detections, settings_.lowMatchIou, false, time);
  // 3. The high scores left with the tracks seen once; those not seen again now are dropped.
  associate(tentativePool_, high_, detections, settings_.tentativeMatchIou, settings_.fuseScore,
            time);
  // 4. The high scores left with every track not matched yet, by buffered IoU.
  if (settings_.bufferScale > 0) {
    leftover_.clear();
    for (std::size_t i : confirmedPool_) {
      if (!states_[i].track.matched) leftover_.push_back(i);
    }
    for (std::size_t i : tentativePool_) leftover_.push_back(i);
    associate(leftover_, high_, detections, settings_.matchIou, settings_.fuseScore, time,
              settings_.bufferScale);
  }
  // 5. New tracks from the high scores left.
  startTracks(high_, detections, time);
  // 6. Lost for too long, or seen once and not again: gone.
  std::erase_if(states_, [&](const State& s) {
    return !s.track.matched &&
           (!s.track.confirmed || time - s.track.lastSeen > settings_.lostAfterSeconds);
  });
  tracks_.clear();
  for (State& s : states_) {
    s.tracking = s.track.matched;
    tracks_.push_back(s.track);
  }
  first_ = false;
  lastTime_ = time;
  return tracks_;
}

void ByteTracker::predictTo(double time) {
  const double dt = first_ ? 0.0 : time - lastTime_;
  for (State& s : states_) {
    if (!s.tracking) s.filter.holdHeight();
    s.filter.predict(dt);
    s.track.box = s.filter.box();
    s.track.matched = false;
  }
}

void ByteTracker::splitByScore(const std::vector<Detection>& detections) {
  high_.clear();
  low_.clear();
  for (std::size_t i = 0; i < detections.size(); ++i) {
    const float score = detections[i].score;
    if (score >= settings_.highScore) {
      high_.push_back(i);
    } else if (score > settings_.lowScore) {
      low_.push_back(i);
    }
  }
}

void ByteTracker::associate(std::vector<std::size_t>& pool, std::vector<std::size_t>& dets,
                            const std::vector<Detection>& detections, float minIou, bool fuse,
                            double time, float buffer) {
  if (pool.empty() || dets.empty()) return;
  costs_.rows = pool.size();
  costs_.cols = dets.size();
  costs_.costs.resize(costs_.rows * costs_.cols);
  for (std::size_t r = 0; r < pool.size(); ++r) {
    const State& s = states_[pool[r]];
    const Box predicted = grown(s.track.box, buffer);
    const bool lost = s.track.confirmed && !s.tracking;
    for (std::size_t c = 0; c < dets.size(); ++c) {
      const Detection& d = detections[dets[c]];
      const bool sameHeight =
          !lost || heightsAgree(s.track.box.height, d.box.height, settings_.lostHeightRatio);
      const double similarity =
          sameHeight ? iou(predicted, grown(d.box, buffer)) * (fuse ? d.score : 1.0F) : 0.0;
      costs_.costs[r * costs_.cols + c] = 1.0 - similarity;
    }
  }
  assignWithLimit(costs_, 1.0 - minIou, matches_, scratch_);
  for (const auto& [r, c] : matches_) {
    State& s = states_[pool[r]];
    const Detection& d = detections[dets[c]];
    s.filter.update(d.box);
    s.track.box = s.filter.box();
    s.track.score = d.score;
    s.track.lastSeen = time;
    s.track.hits += 1;
    s.track.matched = true;
    s.track.confirmed = true;
    s.track.established = s.track.established || d.score >= settings_.establishedScore;
  }
  // Take the matched out of both lists.
  poolTaken_.assign(pool.size(), 0);
  detTaken_.assign(dets.size(), 0);
  for (const auto& [r, c] : matches_) {
    poolTaken_[r] = 1;
    detTaken_[c] = 1;
  }
  keepUntaken(pool, poolTaken_);
  keepUntaken(dets, detTaken_);
}

void ByteTracker::startTracks(const std::vector<std::size_t>& dets,
                              const std::vector<Detection>& detections, double time) {
  for (std::size_t i : dets) {
    const Detection& d = detections[i];
    if (d.score < settings_.newTrackScore) continue;
    State s{Track{}, BoxKalman(d.box)};
    s.track.id = nextId_++;
    s.track.box = s.filter.box();
    s.track.startBox = d.box;
    s.track.score = d.score;
    s.track.firstSeen = time;
    s.track.lastSeen = time;
    s.track.hits = 1;
    s.track.matched = true;
    s.track.established = d.score >= settings_.establishedScore;
    // ByteTrack confirms the tracks of its first frame at once; later ones on a second frame.
    s.track.confirmed = first_;
    s.track.confirmedAtStart = first_;
    states_.push_back(s);
  }
}

IouTracker::IouTracker(float minScore, float minIou, double lostAfterSeconds)
    : minScore_(minScore), minIou_(minIou), lostAfterSeconds_(lostAfterSeconds) {}

const std::vector<Track>& IouTracker::update(double time,
                                             const std::vector<Detection>& detections) {
  const bool first = nextId_ == 1;
  struct Pair {
    float iou;
    std::size_t track;
    std::size_t det;
  };
  std::vector<Pair> pairs;
  for (std::size_t t = 0; t < tracks_.size(); ++t) {
    tracks_[t].matched = false;
    for (std::size_t d = 0; d < detections.size(); ++d) {
      if (detections[d].score < minScore_) continue;
      const float overlap = iou(tracks_[t].box, detections[d].box);
      if (overlap >= minIou_) pairs.push_back({overlap, t, d});
    }
  }
  std::sort(pairs.begin(), pairs.end(), [](const Pair& a, const Pair& b) { return a.iou > b.iou; });
  std::vector<char> detTaken(detections.size(), 0);
  for (const Pair& p : pairs) {
    Track& t = tracks_[p.track];
    if (t.matched || detTaken[p.det]) continue;
    detTaken[p.det] = 1;
    t.box = detections[p.det].box;
    t.score = detections[p.det].score;
    t.lastSeen = time;
    t.hits += 1;
    t.matched = true;
    t.confirmed = true;
  }
  std::erase_if(tracks_, [&](const Track& t) {
    return !t.matched && (!t.confirmed || time - t.lastSeen > lostAfterSeconds_);
  });
  for (std::size_t d = 0; d < detections.size(); ++d) {
    if (detTaken[d] || detections[d].score < minScore_) continue;
    Track t;
    t.id = nextId_++;
    t.box = detections[d].box;
    t.startBox = t.box;
    t.score = detections[d].score;
    t.firstSeen = t.lastSeen = time;
    t.hits = 1;
    t.matched = true;
    t.confirmed = first;
    t.confirmedAtStart = first;
    tracks_.push_back(t);
  }
  return tracks_;
}

}  // namespace vigil
