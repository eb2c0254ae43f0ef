#include "detector/track/line_crossing.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace vigil {

namespace {

// > 0: `p` is on the right-hand side of a -> b as seen on the image (y down), < 0: the left.
double sideOf(LinePoint a, LinePoint b, LinePoint p) {
  return (b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x);
}

double segmentDistance(LinePoint a, LinePoint b, LinePoint p) {
  const double dx = b.x - a.x;
  const double dy = b.y - a.y;
  const double t =
      std::clamp(((p.x - a.x) * dx + (p.y - a.y) * dy) / (dx * dx + dy * dy), 0.0, 1.0);
  return std::hypot(p.x - (a.x + t * dx), p.y - (a.y + t * dy));
}

}  // namespace

std::string_view crossingDirectionName(CrossingDirection direction) {
  return direction == CrossingDirection::kIn ? "in" : "out";
}

LinePoint feetOf(const Box& box) {
  return {static_cast<double>(box.x) + static_cast<double>(box.width) / 2,
          static_cast<double>(box.y) + static_cast<double>(box.height)};
}

Expected<CountingLine> CountingLine::make(std::vector<LinePoint> points, double bandPixels,
                                          int minFrames) {
  if (points.size() < 2) {
    return makeError(ErrorCode::kInvalidArgument, "a line needs at least 2 points, got {}",
                     points.size());
  }
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!std::isfinite(points[i].x) || !std::isfinite(points[i].y)) {
      return makeError(ErrorCode::kInvalidArgument, "point {} is not a finite number", i + 1);
    }
    if (i > 0 && points[i] == points[i - 1]) {
      return makeError(ErrorCode::kInvalidArgument,
                       "segment {} (points {} and {}, both [{}, {}]) has zero length", i, i, i + 1,
                       points[i].x, points[i].y);
    }
  }
  if (!(bandPixels >= 0) || !std::isfinite(bandPixels)) {
    return makeError(ErrorCode::kInvalidArgument, "band must be 0 or more pixels, got {}",
                     bandPixels);
  }
  if (minFrames < 1) {
    return makeError(ErrorCode::kInvalidArgument, "min_frames must be at least 1, got {}",
                     minFrames);
  }
  return CountingLine(std::move(points), bandPixels, minFrames);
}

int CountingLine::crossing(LinePoint p, LinePoint q) const {
  // Twice the signed number of segments crossed: a crossing through a vertex two segments share
  // counts 1 for each, elsewhere 2.
  int twice = 0;
  const std::size_t segments = points_.size() - 1;
  for (std::size_t k = 0; k < segments; ++k) {
    const LinePoint a = points_[k];
    const LinePoint b = points_[k + 1];
    const double from = sideOf(a, b, p);
    const double to = sideOf(a, b, q);
    if (!((from < 0 && to > 0) || (from > 0 && to < 0))) continue;
    // The step's line must separate a from b (or pass through one of them).
    const double atA = sideOf(p, q, a);
    const double atB = sideOf(p, q, b);
    if ((atA < 0 && atB < 0) || (atA > 0 && atB > 0)) continue;
    const bool sharedVertex = (atA == 0 && k > 0) || (atB == 0 && k + 1 < segments);
    const int weight = sharedVertex ? 1 : 2;
    twice += to > 0 ? weight : -weight;
  }
  return twice > 0 ? 1 : twice < 0 ? -1 : 0;
}

double CountingLine::distance(LinePoint p) const {
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k + 1 < points_.size(); ++k) {
    best = std::min(best, segmentDistance(points_[k], points_[k + 1], p));
  }
  return best;
}

std::optional<CrossingDirection> observeTrack(const CountingLine& line, LineTrackState& state,
                                              const Track& track) {
  if (reportedFirstOnItsSecondFrame(track)) (void)line.observe(state, feetOf(track.startBox));
  return line.observe(state, feetOf(track.box));
}

std::optional<CrossingDirection> CountingLine::observe(LineTrackState& track,
                                                       LinePoint feet) const {
  const double away = distance(feet);
  if (away == 0) return std::nullopt;  // on the line: the next step starts from the last point
  if (track.last) {
    if (const int step = crossing(*track.last, feet); step != 0) {
      if (track.pending == -step) {
        // Back across before the pending one counted: neither counts, and the track is again
        // on the side it was clear of the line on.
        track.pending = 0;
        track.clear = true;
      } else {
        // A crossing only from a side the track was clear of the line on.
        track.pending = track.clear ? step : 0;
        track.clear = false;
      }
      track.framesPast = 0;
    }
  }
  track.last = feet;
  if (track.pending == 0) {
    track.clear = track.clear || away >= band_;
    return std::nullopt;
  }
  ++track.framesPast;
  if (track.framesPast < minFrames_ || away < band_) return std::nullopt;
  const CrossingDirection counted =
      track.pending > 0 ? CrossingDirection::kIn : CrossingDirection::kOut;
  track.pending = 0;
  track.framesPast = 0;
  track.clear = true;
  return counted;
}

std::vector<SequenceCrossing> crossingsOf(const CountingLine& line, const MotSequence& sequence,
                                          const std::vector<int>& frames) {
  std::vector<SequenceCrossing> out;
  std::map<std::uint64_t, LineTrackState> tracks;
  for (int frame : frames) {
    auto it = sequence.find(frame);
    if (it == sequence.end()) continue;
    for (const MotBox& b : it->second) {
      if (b.ignore) continue;
      if (auto counted = line.observe(tracks[b.id], feetOf(b.box))) {
        out.push_back({frame, b.id, *counted});
      }
    }
  }
  return out;
}

}  // namespace vigil
