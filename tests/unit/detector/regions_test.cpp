#include "detector/regions.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

const cv::Size k1080p(1920, 1080);

RegionSettings settings() {
  RegionSettings s;
  s.input = cv::Size(416, 416);
  return s;
}

bool contains(const cv::Rect& r, const Box& b) {
  return b.x >= r.x && b.y >= r.y && b.right() <= r.br().x && b.bottom() <= r.br().y;
}

TEST(RegionsTest, OnlyPicturesTwiceTheInputGetRegions) {
  EXPECT_FALSE(regionsHelp({640, 480}, {416, 416}));
  EXPECT_FALSE(regionsHelp({768, 432}, {416, 416}));
  EXPECT_TRUE(regionsHelp({1280, 720}, {416, 416}));
  EXPECT_TRUE(regionsHelp(k1080p, {416, 416}));
}

TEST(RegionsTest, ARegionAroundASmallBoxIsTheInputsSizeAndHoldsIt) {
  const Box person{1000, 500, 30, 80};
  const cv::Rect r = regionAround(person, k1080p, settings());
  EXPECT_EQ(r.size(), cv::Size(416, 416));
  EXPECT_TRUE(contains(r, person));
  // Centred on the person.
  EXPECT_NEAR(r.x + r.width / 2.0, 1015, 1);
  EXPECT_NEAR(r.y + r.height / 2.0, 540, 1);
}

TEST(RegionsTest, ARegionGrowsWithItsBoxAndStaysInsideThePicture) {
  const Box tall{1800, 100, 200, 600};  // runs off the right edge once grown
  const cv::Rect r = regionAround(tall, k1080p, settings());
  EXPECT_EQ(r.width, r.height);
  EXPECT_EQ(r.width, 900);  // 600 * 1.5
  EXPECT_EQ(r.br().x, 1920);
  EXPECT_GE(r.y, 0);
  EXPECT_TRUE(contains(r, Box{1800, 100, 120, 600}));
  // Taller than the picture allows: as tall as the picture.
  const cv::Rect huge = regionAround(Box{100, 0, 300, 1000}, k1080p, settings());
  EXPECT_EQ(huge.height, 1080);
}

TEST(RegionsTest, NothingMovingAndNobodyTrackedIsTheWholePicture) {
  auto regions = planRegions(k1080p, {}, {}, false, settings());
  ASSERT_EQ(regions.size(), 1U);
  EXPECT_EQ(regions[0].kind, RegionKind::kWhole);
  EXPECT_EQ(regions[0].rect, cv::Rect(0, 0, 1920, 1080));
}

TEST(RegionsTest, MotionOverMostOfThePictureFallsBackToTheWholePicture) {
  const std::vector<Box> motion{{0, 0, 900, 1000}, {1000, 0, 900, 1000}};
  auto regions = planRegions(k1080p, motion, {}, false, settings());
  ASSERT_EQ(regions.size(), 1U);
  EXPECT_EQ(regions[0].kind, RegionKind::kWhole);
}

TEST(RegionsTest, OverlappingRegionsMergeAndFarOnesStayApart) {
  // Two persons side by side: one region holds both. A third across the picture: its own.
  const std::vector<Box> tracks{{500, 400, 40, 100}, {560, 410, 40, 100}};
  const std::vector<Box> motion{{1600, 300, 50, 120}};
  auto regions = planRegions(k1080p, motion, tracks, false, settings());
  ASSERT_EQ(regions.size(), 2U);
  EXPECT_EQ(regions[0].kind, RegionKind::kTrack);
  EXPECT_TRUE(contains(regions[0].rect, tracks[0]));
  EXPECT_TRUE(contains(regions[0].rect, tracks[1]));
  EXPECT_EQ(regions[0].rect.width, regions[0].rect.height);
  EXPECT_LE(regions[0].rect.width, 480);
  EXPECT_EQ(regions[1].kind, RegionKind::kMotion);
  EXPECT_TRUE(contains(regions[1].rect, motion[0]));
}

TEST(RegionsTest, AMotionRegionOverlappingATrackBecomesATrackRegion) {
  const std::vector<Box> tracks{{500, 400, 40, 100}};
  const std::vector<Box> motion{{505, 405, 40, 100}};
  auto regions = planRegions(k1080p, motion, tracks, false, settings());
  ASSERT_EQ(regions.size(), 1U);
  EXPECT_EQ(regions[0].kind, RegionKind::kTrack);
}

TEST(RegionsTest, MoreThanTheCapAreMergedNearestFirst) {
  RegionSettings s = settings();
  s.maxRegions = 2;
  // Three apart at the top: the two nearest (left) merge, the far right one stays alone.
  const std::vector<Box> motion{{100, 10, 20, 40}, {500, 10, 20, 40}, {1800, 10, 20, 40}};
  auto regions = planRegions({3840, 2160}, motion, {}, false, s);
  ASSERT_EQ(regions.size(), 2U);
  EXPECT_TRUE(contains(regions[0].rect, motion[0]));
  EXPECT_TRUE(contains(regions[0].rect, motion[1]));
  EXPECT_TRUE(contains(regions[1].rect, motion[2]));
  EXPECT_EQ(regions[1].rect.width, 416);
}

TEST(RegionsTest, MoreThanTheCapFarApartDropTheLowestPriorityInsteadOfShrinkingAll) {
  RegionSettings s = settings();
  s.maxRegions = 2;
  // Merging any two would make a region over twice the input's side: the last motion box (the
  // smallest: MotionDetector gives them largest first) waits for the next detection.
  const std::vector<Box> tracks{{100, 100, 30, 80}};
  const std::vector<Box> motion{{1700, 100, 40, 90}, {900, 1900, 20, 40}};
  auto regions = planRegions({3840, 2160}, motion, tracks, false, s);
  ASSERT_EQ(regions.size(), 2U);
  EXPECT_EQ(regions[0].kind, RegionKind::kTrack);
  EXPECT_TRUE(contains(regions[0].rect, tracks[0]));
  EXPECT_TRUE(contains(regions[1].rect, motion[0]));
  EXPECT_EQ(regions[1].rect.width, 416);
}

TEST(RegionsTest, ThePlannerAddsTheWholePictureEveryWholeEverySeconds) {
  RegionPlanner planner(settings());  // every 1 s
  const std::vector<Box> motion{{1000, 500, 30, 80}};
  auto kinds = [&](double t) {
    std::vector<RegionKind> out;
    for (const Region& r : planner.plan(k1080p, t, motion, {})) out.push_back(r.kind);
    return out;
  };
  using K = RegionKind;
  EXPECT_EQ(kinds(0.0), (std::vector<K>{K::kMotion, K::kWhole}));
  EXPECT_EQ(kinds(0.2), (std::vector<K>{K::kMotion}));
  EXPECT_EQ(kinds(0.8), (std::vector<K>{K::kMotion}));
  EXPECT_EQ(kinds(1.0), (std::vector<K>{K::kMotion, K::kWhole}));
  EXPECT_EQ(kinds(1.2), (std::vector<K>{K::kMotion}));
}

}  // namespace
}  // namespace vigil
