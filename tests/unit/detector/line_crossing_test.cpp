#include "detector/track/line_crossing.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vigil {
namespace {

// A horizontal line at y = 100 from x = 0 to x = 200, drawn left to right: `in` is down.
CountingLine horizontal(double band = 0, int minFrames = 1) {
  auto line = CountingLine::make({{0, 100}, {200, 100}}, band, minFrames);
  EXPECT_TRUE(line) << line.error().message;
  return *line;
}

// The counted crossings of one track walking through `feet`, as "in"/"out" letters.
std::string walk(const CountingLine& line, const std::vector<LinePoint>& feet) {
  LineTrackState track;
  std::string counted;
  for (LinePoint p : feet) {
    if (auto c = line.observe(track, p)) counted += *c == CrossingDirection::kIn ? 'I' : 'O';
  }
  return counted;
}

TEST(LineCrossingTest, DownAHorizontalLineDrawnLeftToRightIsIn) {
  const CountingLine line = horizontal();
  EXPECT_EQ(line.crossing({50, 90}, {50, 110}), 1);
  EXPECT_EQ(line.crossing({50, 110}, {50, 90}), -1);
  EXPECT_EQ(walk(line, {{50, 60}, {50, 90}, {52, 120}, {55, 150}}), "I");
  EXPECT_EQ(walk(line, {{50, 150}, {50, 110}, {52, 80}}), "O");
}

TEST(LineCrossingTest, TheDirectionFollowsTheLinesOwnDirection) {
  // Drawn right to left, the same walk down is `out`; a vertical line drawn top to bottom has
  // its right-hand side (as seen on the image) at smaller x: walking left is `in`.
  auto reversed = CountingLine::make({{200, 100}, {0, 100}}, 0);
  ASSERT_TRUE(reversed);
  EXPECT_EQ(walk(*reversed, {{50, 60}, {50, 140}}), "O");
  auto vertical = CountingLine::make({{300, 0}, {300, 400}}, 0);
  ASSERT_TRUE(vertical);
  EXPECT_EQ(walk(*vertical, {{350, 200}, {250, 200}}), "I");
  EXPECT_EQ(walk(*vertical, {{250, 200}, {350, 200}}), "O");
}

TEST(LineCrossingTest, AStepBesideTheSegmentIsNoCrossing) {
  const CountingLine line = horizontal();
  // Crossing y = 100 at x = 250 or x = -10: the line's extension, not the segment.
  EXPECT_EQ(line.crossing({250, 90}, {250, 110}), 0);
  EXPECT_EQ(line.crossing({-10, 50}, {-10, 150}), 0);
  EXPECT_EQ(walk(line, {{250, 50}, {250, 150}, {260, 200}}), "");
  // A diagonal step that meets y = 100 past the end of the segment.
  EXPECT_EQ(line.crossing({190, 50}, {290, 150}), 0);
  // Through the end point itself: it meets the segment.
  EXPECT_EQ(line.crossing({150, 50}, {250, 150}), 1);
}

TEST(LineCrossingTest, APointExactlyOnTheLineCountsOnceAndNeverForATouch) {
  const CountingLine line = horizontal();
  // Onto the line and on: one `in`, counted when the track leaves the line.
  EXPECT_EQ(walk(line, {{50, 80}, {50, 100}, {50, 120}}), "I");
  // Onto the line and back: nothing.
  EXPECT_EQ(walk(line, {{50, 80}, {50, 100}, {50, 80}}), "");
  // Standing on it for several frames, then going on down.
  EXPECT_EQ(walk(line, {{50, 80}, {50, 100}, {60, 100}, {70, 100}, {70, 130}}), "I");
  // A track first seen on the line has come from nowhere: it crosses nothing.
  EXPECT_EQ(walk(line, {{50, 100}, {50, 130}}), "");
}

TEST(LineCrossingTest, WaveringOnTheLineIsNotCountedAgainAndAgain) {
  // Without a band, each step across counts: the naive rule.
  EXPECT_EQ(walk(horizontal(0), {{50, 50}, {50, 97}, {50, 103}, {50, 97}, {50, 103}, {50, 150}}),
            "IOI");
  // With an 8 px band the person is counted once, when they are 8 px past.
  EXPECT_EQ(walk(horizontal(8), {{50, 50}, {50, 97}, {50, 103}, {50, 97}, {50, 103}, {50, 150}}),
            "I");
  // Crossing, counted, then swaying back and forth over the line within the band: still once.
  EXPECT_EQ(walk(horizontal(8), {{50, 50}, {50, 120}, {50, 96}, {50, 104}, {50, 95}, {50, 130}}),
            "I");
  // Really going back: a second crossing, out.
  EXPECT_EQ(walk(horizontal(8), {{50, 50}, {50, 120}, {50, 96}, {50, 60}}), "IO");
  // Never 8 px past: nothing, however long they waver.
  EXPECT_EQ(walk(horizontal(8), {{50, 95}, {50, 105}, {50, 95}, {50, 105}, {50, 95}}), "");
}

TEST(LineCrossingTest, ACrossingIsFromClearOfTheLineOnOneSideToClearOfItOnTheOther) {
  const CountingLine line = horizontal(8);
  // First seen 5 px above the line (a box whose feet the detector put a little off, a person
  // the track started on at the line): it has no side yet, and going down counts nothing.
  EXPECT_EQ(walk(line, {{50, 95}, {50, 130}, {50, 160}}), "");
  // Seen 10 px above first: clear of it, so the same walk down is `in`.
  EXPECT_EQ(walk(line, {{50, 90}, {50, 130}}), "I");
  // Once clear on the new side, back up and clear above: `out`.
  EXPECT_EQ(walk(line, {{50, 95}, {50, 130}, {50, 70}}), "O");
  // Over the line and back within the band: back on the side it was clear on, so the next
  // walk down counts.
  EXPECT_EQ(walk(line, {{50, 50}, {50, 104}, {50, 96}, {50, 130}}), "I");
}

TEST(LineCrossingTest, MinFramesWaitsForThatManyObservationsOnTheNewSide) {
  const CountingLine line = horizontal(0, 3);
  EXPECT_EQ(walk(line, {{50, 80}, {50, 120}, {50, 130}}), "");
  EXPECT_EQ(walk(line, {{50, 80}, {50, 120}, {50, 130}, {50, 140}}), "I");
  // Back over before the third: nothing.
  EXPECT_EQ(walk(line, {{50, 80}, {50, 120}, {50, 130}, {50, 80}, {50, 70}}), "");
}

TEST(LineCrossingTest, APolylineCornerIsCountedOnce) {
  // Right along y = 100 to (100, 100), then down to (100, 200): an L.
  auto line = CountingLine::make({{0, 100}, {100, 100}, {100, 200}}, 0);
  ASSERT_TRUE(line);
  // Through the corner from above-right to below-left: from the left-hand side of both
  // segments to the right-hand side of both. Once, `in`.
  EXPECT_EQ(line->crossing({150, 50}, {50, 150}), 1);
  EXPECT_EQ(walk(*line, {{150, 50}, {50, 150}}), "I");
  EXPECT_EQ(walk(*line, {{50, 150}, {150, 50}}), "O");
  // Only touching the corner from outside: half a crossing in over one leg, half out over the
  // other. Nothing.
  EXPECT_EQ(line->crossing({50, 50}, {150, 150}), 0);
  // Across each leg away from the corner.
  EXPECT_EQ(line->crossing({50, 50}, {50, 150}), 1);
  EXPECT_EQ(line->crossing({150, 150}, {50, 150}), 1);
  // Into the L's inner corner over one leg and out over the other: both ends on the same side.
  EXPECT_EQ(line->crossing({50, 50}, {200, 250}), 0);
  // The vertex of a straight polyline is no corner: a step through it counts once.
  auto straight = CountingLine::make({{0, 100}, {100, 100}, {200, 100}}, 0);
  ASSERT_TRUE(straight);
  EXPECT_EQ(straight->crossing({100, 50}, {100, 150}), 1);
}

TEST(LineCrossingTest, ADistanceIsToTheNearestPointOfTheSegments) {
  auto line = CountingLine::make({{0, 100}, {100, 100}, {100, 200}});
  ASSERT_TRUE(line);
  EXPECT_DOUBLE_EQ(line->distance({50, 90}), 10);
  EXPECT_DOUBLE_EQ(line->distance({130, 150}), 30);
  EXPECT_DOUBLE_EQ(line->distance({-30, 140}), 50);
}

TEST(LineCrossingTest, BadLinesAreRefusedSayingWhy) {
  auto one = CountingLine::make({{1, 2}});
  ASSERT_FALSE(one);
  EXPECT_EQ(one.error().message, "a line needs at least 2 points, got 1");
  auto flat = CountingLine::make({{0, 0}, {10, 10}, {10, 10}});
  ASSERT_FALSE(flat);
  EXPECT_EQ(flat.error().message, "segment 2 (points 2 and 3, both [10, 10]) has zero length");
  EXPECT_FALSE(CountingLine::make({{0, 0}, {10, 0}}, -1));
  EXPECT_FALSE(CountingLine::make({{0, 0}, {10, 0}}, 8, 0));
}

TEST(LineCrossingTest, TheFeetAreTheBottomCentreOfTheBox) {
  const LinePoint feet = feetOf(Box{10, 20, 40, 100});
  EXPECT_DOUBLE_EQ(feet.x, 30);
  EXPECT_DOUBLE_EQ(feet.y, 120);
}

TEST(LineCrossingTest, ARecordedSequenceIsCountedPerTrackInFrameOrder) {
  const CountingLine line = horizontal(8);
  MotSequence seq;
  // Track 1's feet walk down x = 50 (60, 80, 100 on the line, 120, 140); track 2's up x = 320,
  // beside the segment; an ignore region's bottom jumps over the line every frame: nobody.
  for (int f = 1; f <= 5; ++f) {
    const auto step = static_cast<float>(f);
    seq[f].push_back(MotBox{1, Box{30, 20 * step - 60, 40, 100}, false});
    seq[f].push_back(MotBox{2, Box{300, 160 - 40 * step, 40, 100}, false});
    seq[f].push_back(MotBox{9, Box{30, f % 2 == 0 ? -10.0F : 10.0F, 40, 100}, true});
  }
  const auto all = crossingsOf(line, seq, {1, 2, 3, 4, 5});
  ASSERT_EQ(all.size(), 1U);
  EXPECT_EQ(all[0].trackId, 1U);
  EXPECT_EQ(all[0].direction, CrossingDirection::kIn);
  EXPECT_EQ(all[0].frame, 4);  // 80 -> 120 (100 skipped), 20 px past the band of 8
  // On frames 1, 3, 5 only (a stride): the same crossing, counted on frame 5.
  const auto strided = crossingsOf(line, seq, {1, 3, 5});
  ASSERT_EQ(strided.size(), 1U);
  EXPECT_EQ(strided[0].frame, 5);
}

}  // namespace
}  // namespace vigil
