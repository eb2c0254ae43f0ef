#include "detector/nms.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

Detection det(float x, float y, float w, float h, float score, int classId = 0) {
  return Detection{Box{x, y, w, h}, score, classId};
}

TEST(NmsTest, KeepsHighestScoreAndDropsOverlapAboveThreshold) {
  // b overlaps a by IoU 81/119 = 0.68 (> 0.65): dropped. c is far away: kept.
  std::vector<Detection> in{det(0, 0, 10, 10, 0.5F), det(1, 1, 10, 10, 0.9F),
                            det(50, 50, 10, 10, 0.7F)};
  std::vector<int> order;
  std::vector<Detection> kept;
  nonMaximumSuppression(in, 0.65F, 100, order, kept);
  ASSERT_EQ(kept.size(), 2U);
  EXPECT_FLOAT_EQ(kept[0].score, 0.9F);
  EXPECT_FLOAT_EQ(kept[0].box.x, 1.0F);
  EXPECT_FLOAT_EQ(kept[1].score, 0.7F);
}

TEST(NmsTest, OverlapExactlyAtThresholdIsKept) {
  // Two 10x10 boxes offset by 5 in x: intersection 50, union 150, IoU exactly 1/3.
  std::vector<Detection> in{det(0, 0, 10, 10, 0.9F), det(5, 0, 10, 10, 0.8F)};
  std::vector<int> order;
  std::vector<Detection> kept;
  nonMaximumSuppression(in, 1.0F / 3.0F, 100, order, kept);
  EXPECT_EQ(kept.size(), 2U);
  nonMaximumSuppression(in, 0.33F, 100, order, kept);
  EXPECT_EQ(kept.size(), 1U);
}

TEST(NmsTest, ClassesAreSuppressedSeparately) {
  std::vector<Detection> in{det(0, 0, 10, 10, 0.9F, 0), det(0, 0, 10, 10, 0.8F, 1),
                            det(0, 0, 10, 10, 0.7F, 0)};
  std::vector<int> order;
  std::vector<Detection> kept;
  nonMaximumSuppression(in, 0.5F, 100, order, kept);
  ASSERT_EQ(kept.size(), 2U);
  EXPECT_EQ(kept[0].classId, 0);
  EXPECT_EQ(kept[1].classId, 1);
}

TEST(NmsTest, EqualScoresKeepInputOrderAndMaxDetectionsCaps) {
  std::vector<Detection> in{det(0, 0, 5, 5, 0.5F), det(100, 0, 5, 5, 0.5F),
                            det(200, 0, 5, 5, 0.5F)};
  std::vector<int> order;
  std::vector<Detection> kept;
  nonMaximumSuppression(in, 0.5F, 2, order, kept);
  ASSERT_EQ(kept.size(), 2U);
  EXPECT_FLOAT_EQ(kept[0].box.x, 0.0F);
  EXPECT_FLOAT_EQ(kept[1].box.x, 100.0F);
}

TEST(NmsTest, EmptyInputGivesEmptyOutput) {
  std::vector<Detection> in;
  std::vector<int> order;
  std::vector<Detection> kept{det(0, 0, 1, 1, 1)};
  nonMaximumSuppression(in, 0.5F, 10, order, kept);
  EXPECT_TRUE(kept.empty());
}

TEST(ClipBoxesTest, ClipsToImage) {
  std::vector<Detection> d{det(-5, -2, 20, 10, 0.9F), det(90, 40, 30, 30, 0.8F)};
  clipBoxes(d, 100, 50);
  EXPECT_FLOAT_EQ(d[0].box.x, 0);
  EXPECT_FLOAT_EQ(d[0].box.y, 0);
  EXPECT_FLOAT_EQ(d[0].box.width, 15);
  EXPECT_FLOAT_EQ(d[0].box.height, 8);
  EXPECT_FLOAT_EQ(d[1].box.right(), 100);
  EXPECT_FLOAT_EQ(d[1].box.bottom(), 50);
  EXPECT_FLOAT_EQ(d[1].box.width, 10);
}

}  // namespace
}  // namespace vigil
