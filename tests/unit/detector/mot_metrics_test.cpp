#include "detector/track/mot_metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "detector/track/mot_io.h"
#include "tests/model_paths.h"
#include "tests/temp_dir.h"

namespace vigil {
namespace {

const Box kA{0, 0, 10, 10};
const Box kB{100, 0, 10, 10};

MotSequence sequence(std::initializer_list<std::pair<int, std::vector<MotBox>>> frames) {
  MotSequence s;
  for (const auto& [frame, boxes] : frames) s[frame] = boxes;
  return s;
}

TEST(MotMetricsTest, AHypothesisEqualToTheTruthScoresOne) {
  MotSequence gt = sequence({{1, {{1, kA}, {2, kB}}}, {2, {{1, kA}, {2, kB}}}});
  MotScores s = evaluateTracks(gt, gt, {1, 2});
  EXPECT_DOUBLE_EQ(s.mota, 1);
  EXPECT_DOUBLE_EQ(s.motp, 1);
  EXPECT_DOUBLE_EQ(s.idf1, 1);
  EXPECT_NEAR(s.hota, 1, 1e-12);
  EXPECT_EQ(s.idSwitches, 0);
  EXPECT_EQ(s.mostlyTracked, 2);
}

// One person, seen on four frames; the tracker gives it id 10, then id 11.
TEST(MotMetricsTest, AnIdSwitchCostsMotaIdf1AndAssociation) {
  MotSequence gt = sequence({{1, {{1, kA}}}, {2, {{1, kA}}}, {3, {{1, kA}}}, {4, {{1, kA}}}});
  MotSequence hyp = sequence({{1, {{10, kA}}}, {2, {{10, kA}}}, {3, {{11, kA}}}, {4, {{11, kA}}}});
  MotScores s = evaluateTracks(gt, hyp, {1, 2, 3, 4});
  EXPECT_EQ(s.tp, 4);
  EXPECT_EQ(s.idSwitches, 1);
  EXPECT_DOUBLE_EQ(s.mota, 0.75);  // 1 - 1/4
  // The best one-to-one pairing keeps 2 of 4 boxes: IDF1 = 2 * 2 / (4 + 4).
  EXPECT_DOUBLE_EQ(s.idf1, 0.5);
  EXPECT_DOUBLE_EQ(s.idp, 0.5);
  EXPECT_DOUBLE_EQ(s.idr, 0.5);
  // Every box detected exactly (DetA 1); each pair shares 2 of |4 + 2 - 2| boxes (AssA 0.5).
  EXPECT_NEAR(s.detA, 1, 1e-12);
  EXPECT_NEAR(s.assA, 0.5, 1e-12);
  EXPECT_NEAR(s.hota, std::sqrt(0.5), 1e-12);
}

// Frame 2: the tracker's id 10 still overlaps the person at IoU 0.6 and id 20 at IoU 1. CLEAR
// MOT keeps the previous match (no switch) and counts id 20 as a false positive.
TEST(MotMetricsTest, ThePreviousMatchIsKeptWhileItStillQualifies) {
  const Box shifted{0, 0, 10, 6};  // IoU with kA: 60 / 100
  MotSequence gt = sequence({{1, {{1, kA}}}, {2, {{1, kA}}}});
  MotSequence hyp = sequence({{1, {{10, kA}}}, {2, {{10, shifted}, {20, kA}}}});
  MotScores s = evaluateTracks(gt, hyp, {1, 2});
  EXPECT_EQ(s.idSwitches, 0);
  EXPECT_EQ(s.fp, 1);
  EXPECT_EQ(s.tp, 2);
  EXPECT_DOUBLE_EQ(s.mota, 0.5);
  EXPECT_NEAR(s.motp, 0.8, 1e-6);  // (1 + 0.6) / 2
}

TEST(MotMetricsTest, BelowHalfOverlapIsAMissAndAFalsePositive) {
  const Box far{0, 0, 10, 4};  // IoU 0.4
  MotScores s = evaluateTracks(sequence({{1, {{1, kA}}}}), sequence({{1, {{10, far}}}}), {1});
  EXPECT_EQ(s.tp, 0);
  EXPECT_EQ(s.fn, 1);
  EXPECT_EQ(s.fp, 1);
  EXPECT_DOUBLE_EQ(s.mota, -1);
  EXPECT_EQ(s.mostlyLost, 1);
}

TEST(MotMetricsTest, TrackerBoxesOnIgnoreRegionsCountNeitherWay) {
  MotSequence gt = sequence({{1, {{1, kA}, {2, kB, true}}}});
  MotSequence hyp = sequence({{1, {{10, kA}, {11, kB}}}});
  MotScores s = evaluateTracks(gt, hyp, {1});
  EXPECT_EQ(s.fp, 0);
  EXPECT_EQ(s.gtBoxes, 1);
  EXPECT_DOUBLE_EQ(s.mota, 1);
  EXPECT_DOUBLE_EQ(s.idf1, 1);
}

TEST(MotMetricsTest, OnlyTheScoredFramesCount) {
  MotSequence gt = sequence({{1, {{1, kA}}}, {2, {{1, kA}}}, {3, {{1, kA}}}});
  MotSequence hyp = sequence({{1, {{10, kA}}}, {3, {{10, kA}}}});  // frame 2 not tracked
  MotScores s = evaluateTracks(gt, hyp, {1, 3});
  EXPECT_EQ(s.gtBoxes, 2);
  EXPECT_EQ(s.frames, 2);
  EXPECT_DOUBLE_EQ(s.mota, 1);
}

// What writeMotLines writes for `tracks` on `frame` (`previous` the frame tracked before), read
// back with readMotText.
Expected<MotSequence> writtenAndReadBack(const TempDir& dir, int frame, int previous,
                                         const std::vector<Track>& tracks) {
  {
    std::ofstream out(dir.path() / "t.txt");
    writeMotLines(out, frame, previous, tracks);
  }
  return readMotText(dir.path() / "t.txt");
}

TEST(MotIoTest, MotTextAddsOneToTheCornerAndReadsBack) {
  TempDir dir;
  Track seen;
  seen.id = 3;
  seen.box = Box{10, 20, 30, 40};
  seen.score = 0.5F;
  seen.confirmed = seen.matched = true;
  Track lost = seen;
  lost.id = 4;
  lost.matched = false;
  auto read = writtenAndReadBack(dir, 7, 6, {seen, lost});
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_EQ(read->at(7).size(), 1U) << "only tracks detected on the frame";
  EXPECT_EQ(read->at(7)[0].id, 3U);
  EXPECT_FLOAT_EQ(read->at(7)[0].box.x, 11);
  EXPECT_FLOAT_EQ(read->at(7)[0].box.y, 21);
  writeFile(dir.path() / "bad.txt", "1,1,2,3,4,5,1,-1,-1,-1\n1,2,3\n");
  auto bad = readMotText(dir.path() / "bad.txt");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("bad.txt:2: 3 fields"), std::string::npos)
      << bad.error().message;
}

// A track reported first on its second frame: its start box goes to the frame tracked before,
// where it was detected and not yet confirmed; a track of the tracker's first frame has none.
TEST(MotIoTest, ATrackConfirmedOnItsSecondFrameGetsItsStartOnTheFrameBefore) {
  TempDir dir;
  Track walker;
  walker.id = 5;
  walker.startBox = Box{100, 20, 30, 40};
  walker.box = Box{120, 20, 30, 40};
  walker.confirmed = walker.matched = true;
  walker.hits = 2;
  Track fromTheStart = walker;
  fromTheStart.id = 6;
  fromTheStart.confirmedAtStart = true;
  auto read = writtenAndReadBack(dir, 11, 6, {walker, fromTheStart});
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_EQ(read->count(6), 1U);
  ASSERT_EQ(read->at(6).size(), 1U) << "the walker's start only";
  EXPECT_EQ(read->at(6)[0].id, 5U);
  EXPECT_FLOAT_EQ(read->at(6)[0].box.x, 101);
  EXPECT_EQ(read->at(11).size(), 2U);
}

TEST(MotIoTest, TheSharedGroundTruthReads) {
  const auto file = testing::videosDir() / "TUD-Campus.person.json";
  if (!std::filesystem::exists(file)) GTEST_SKIP() << file << " absent";
  auto gt = readGroundTruthJson(file);
  ASSERT_TRUE(gt) << gt.error().message;
  EXPECT_EQ(gt->frames.size(), 71U);
  std::size_t boxes = 0;
  for (const auto& [frame, b] : gt->boxes) boxes += b.size();
  EXPECT_EQ(boxes, 359U);
  MotScores self = evaluateTracks(gt->boxes, gt->boxes, gt->frames);
  EXPECT_DOUBLE_EQ(self.mota, 1);
  EXPECT_EQ(self.gtTracks, 8);
}

}  // namespace
}  // namespace vigil
