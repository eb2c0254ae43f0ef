#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "detector/box.h"
#include "detector/track/byte_tracker.h"
#include "detector/track/mot_metrics.h"
#include "foundation/error.h"

namespace vigil {

// Counting lines: who crossed a line, which way (issue 37). Pure geometry on tracked boxes; the
// daemon (events/person_tracks), `vigil track --lines-out` and `vigil eval-lines` all count
// with this one rule, so their counts are comparable.
//
// The rule. A line is a directed polyline P1 -> P2 -> ... in pixels (x right, y down). A
// person's point is the bottom centre of their box (the feet). A step is the move between two
// consecutive observations of one track (frames it was detected on). A step crosses the line
// when its ends lie strictly on opposite sides of a segment and it meets that segment; `in` is
// from the left-hand side of Pk -> Pk+1 to its right-hand side as seen on the image (a
// horizontal line drawn left to right: moving down the picture is `in`), `out` the other way.
// At a vertex two segments meet; a step through it counts half for each, so a step through a
// corner counts once when it goes from one side of the polyline to the other and not at all
// when it only touches the corner. An observation exactly on the line is skipped (the next step
// starts from the last observation off the line), so stepping onto the line and on counts once.
//
// Hysteresis, on both sides. A crossing is from clear of the line on one side to clear of it on
// the other, clear being at least `bandPixels` from it. A step that crosses makes a crossing
// pending only if the track was seen clear of the line on the side it leaves (since it got
// there); it is counted when the track is seen `minFrames` times on the new side since the step
// (the crossing step's end included) and, on the last of them, clear of the line. A step back
// across the line before that cancels it, and the track is again clear on its old side. So a
// person wavering on the line is not counted, one who crosses and comes back within the band
// counts neither way, a track that ends inside the band does not count its last crossing, and
// a track first seen inside the band (a detector's box a few pixels off the person's feet, a
// track started right at the line) has no side until it gets clear of the line. What this
// costs on the clips with ground truth: bench/lines.md.

struct LinePoint {
  double x = 0;
  double y = 0;

  bool operator==(const LinePoint&) const = default;
};

enum class CrossingDirection { kIn, kOut };
std::string_view crossingDirectionName(CrossingDirection direction);  // "in", "out"

// The band bench/lines.md chose: pixels clear of the line, on both sides, for a crossing to count.
inline constexpr double kDefaultLineBandPixels = 8;

// The feet: the bottom centre of a box.
LinePoint feetOf(const Box& box);

// Where a track is with respect to one line. Value type: the caller keeps one per track and line.
struct LineTrackState {
  std::optional<LinePoint> last;  // the last observation off the line
  int pending = 0;                // +1 an `in` waits for the band, -1 an `out`, 0 none
  int framesPast = 0;             // observations on the new side since the pending step
  bool clear = false;             // seen `band` from the line on the side it is on
};

class CountingLine {
 public:
  // Refused: fewer than two points, a segment of zero length, a non-finite coordinate, a
  // negative band, minFrames below 1. The message says which point or segment.
  static Expected<CountingLine> make(std::vector<LinePoint> points,
                                     double bandPixels = kDefaultLineBandPixels, int minFrames = 1);

  // One observation of a track whose state is `track`: the crossing it completes, if any.
  std::optional<CrossingDirection> observe(LineTrackState& track, LinePoint feet) const;

  // +1 the step p -> q crosses the line `in`, -1 `out`, 0 neither (or it touches a corner only).
  int crossing(LinePoint p, LinePoint q) const;
  // The distance from `p` to the nearest point of the polyline.
  double distance(LinePoint p) const;

  const std::vector<LinePoint>& points() const { return points_; }
  double bandPixels() const { return band_; }
  int minFrames() const { return minFrames_; }

 private:
  CountingLine(std::vector<LinePoint> points, double band, int minFrames)
      : points_(std::move(points)), band_(band), minFrames_(minFrames) {}

  std::vector<LinePoint> points_;
  double band_ = kDefaultLineBandPixels;
  int minFrames_ = 1;
};

// A track's observation on a frame it was detected on, for one line: on the frame it is reported
// first on its second frame (reportedFirstOnItsSecondFrame), its start first (one observation
// alone counts nothing), then its box. What the daemon's lines and `vigil track --lines-out`
// both observe, so that their steps are the ones a tracks file holds.
std::optional<CrossingDirection> observeTrack(const CountingLine& line, LineTrackState& state,
                                              const Track& track);

// One counted crossing of a recorded sequence.
struct SequenceCrossing {
  int frame = 0;  // the frame it was counted on
  std::uint64_t trackId = 0;
  CrossingDirection direction = CrossingDirection::kIn;
};

// The crossings of every track of `sequence` (MotSequence boxes as they are: convert their
// coordinates first if the line is in other ones) on the frames `frames` (ascending), in frame
// order. Ignore regions (MotBox::ignore) are not persons and are skipped.
std::vector<SequenceCrossing> crossingsOf(const CountingLine& line, const MotSequence& sequence,
                                          const std::vector<int>& frames);

}  // namespace vigil
