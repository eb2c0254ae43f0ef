#include "daemon/pipeline/camera_regions.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

const cv::Size k1080p(1920, 1080);
const cv::Size kInput(416, 416);

bool holds(const cv::Rect& r, const Box& b) {
  return b.x >= r.x && b.y >= r.y && b.right() <= r.br().x && b.bottom() <= r.br().y;
}

TEST(CameraRegionsTest, AutoIsOnForA1080pPictureAndOffForA640x480One) {
  CameraRegions regions;
  EXPECT_FALSE(regions.active());
  EXPECT_FALSE(regions.decide({640, 480}, kInput));
  // Off: what the others hand in is not kept.
  regions.setPersons({Detection{{100, 100, 40, 100}, 0.9F, 0}});
  EXPECT_TRUE(regions.decide(k1080p, kInput));
  EXPECT_TRUE(regions.active());
  auto plan = regions.plan(k1080p, 0.0);
  ASSERT_EQ(plan.size(), 1U);
  EXPECT_EQ(plan[0].kind, RegionKind::kWhole) << "nothing moves, nobody tracked";
  CameraRegions off(RegionsConfig{RegionsConfig::Mode::kOff, 1.0, 3});
  EXPECT_FALSE(off.decide(k1080p, kInput));
  CameraRegions on(RegionsConfig{RegionsConfig::Mode::kOn, 1.0, 3});
  EXPECT_TRUE(on.decide({640, 480}, kInput));
}

TEST(CameraRegionsTest, MotionBoxesAndTracksBecomeRegionsInThePicturesPixels) {
  CameraRegions regions;
  ASSERT_TRUE(regions.decide(k1080p, kInput));
  // The motion gate's box, in fractions of the picture: far right, small.
  const Box moving{0.8F, 0.3F, 0.02F, 0.08F};
  regions.setMotion(std::vector<Box>{moving});
  // A tracked person far left, lost (its predicted box) or seen alike.
  Track person;
  person.id = 1;
  person.box = {200, 600, 40, 110};
  regions.setTracks({person});
  auto plan = regions.plan(k1080p, 0.0);
  ASSERT_EQ(plan.size(), 3U);
  EXPECT_EQ(plan[0].kind, RegionKind::kTrack);
  EXPECT_TRUE(holds(plan[0].rect, person.box));
  EXPECT_EQ(plan[1].kind, RegionKind::kMotion);
  EXPECT_TRUE(holds(plan[1].rect, scaledBox(moving, 1920, 1080)));
  EXPECT_EQ(plan[1].rect.size(), kInput);
  EXPECT_EQ(plan[2].kind, RegionKind::kWhole) << "the first detection sees the whole too";
  EXPECT_EQ(regions.lastPlan().size(), 3U);
  // Half a second later: the same regions, without the whole picture (every second).
  EXPECT_EQ(regions.plan(k1080p, 0.5).size(), 2U);
  RegionCounts ran{};
  ran[static_cast<std::size_t>(RegionKind::kTrack)] = 2;
  regions.counted(ran);
  regions.counted(ran);
  EXPECT_EQ(regions.count(RegionKind::kTrack), 4U);
  EXPECT_EQ(regions.count(RegionKind::kMotion), 0U);
}

}  // namespace
}  // namespace vigil
