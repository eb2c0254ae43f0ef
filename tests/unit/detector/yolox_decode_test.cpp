#include "detector/yolox_decode.h"

#include <gtest/gtest.h>

#include <cmath>

namespace vigil {
namespace {

// A 64x32 input with strides 16 and 32: grids 4x2 (8 cells) then 2x1 (2 cells), 3 classes.
struct Fixture {
  InputSpec input;
  PostprocessSpec post;
  Fixture() {
    input.width = 64;
    input.height = 32;
    post.type = "yolox";
    post.strides = {16, 32};
    post.classNames = {"person", "car", "dog"};
  }
};

Tensor zeros(int anchors, int channels) {
  Tensor t;
  t.resize({1, anchors, channels});
  return t;
}

void setRow(Tensor& t, int anchor, std::vector<float> values) {
  std::copy(values.begin(), values.end(), t.data.begin() + anchor * 8);
}

TEST(YoloxDecoderTest, GridOrderAndBoxMathOnExactNumbers) {
  Fixture f;
  YoloxDecoder decoder(f.input, f.post);
  ASSERT_EQ(decoder.anchorCount(), 10);
  ASSERT_EQ(decoder.channelCount(), 8);
  Tensor raw = zeros(10, 8);
  // Anchor 5 = stride 16, row-major cell (x=1, y=1): cx = (0.5 + 1) * 16 = 24,
  // cy = (0.25 + 1) * 16 = 20, w = exp(ln 2) * 16 = 32, h = exp(0) * 16 = 16.
  setRow(raw, 5, {0.5F, 0.25F, std::log(2.0F), 0.0F, 0.8F, 0.9F, 0.1F, 0.2F});
  // Anchor 9 = stride 32, cell (x=1, y=0): cx = (0 + 1) * 32 = 32, cy = 0 * 32 = 0.
  setRow(raw, 9, {0.0F, 0.0F, 0.0F, 0.0F, 0.6F, 0.5F, 0.0F, 0.0F});
  LetterboxInfo lb{0.5F, 128, 64};  // source twice the network size
  std::vector<Detection> out;
  decoder.decode(raw, lb, 0.25F, {true, true, true}, out);
  ASSERT_EQ(out.size(), 2U);
  // Box (24-16, 20-8, 32, 16) in network pixels, divided by the scale 0.5.
  EXPECT_FLOAT_EQ(out[0].box.x, 16.0F);
  EXPECT_FLOAT_EQ(out[0].box.y, 24.0F);
  EXPECT_FLOAT_EQ(out[0].box.width, 64.0F);
  EXPECT_FLOAT_EQ(out[0].box.height, 32.0F);
  EXPECT_FLOAT_EQ(out[0].score, 0.8F * 0.9F);
  EXPECT_EQ(out[0].classId, 0);
  EXPECT_FLOAT_EQ(out[1].box.x, (32.0F - 16.0F) / 0.5F);
  EXPECT_FLOAT_EQ(out[1].box.y, (0.0F - 16.0F) / 0.5F);  // not clipped here
  EXPECT_FLOAT_EQ(out[1].score, 0.3F);
}

// A fitted input (LetterboxInfo's input size, smaller than the manifest's): the grids are that
// size's, the boxes placed by its cells.
TEST(YoloxDecoderTest, AFittedInputHasItsOwnGrids) {
  Fixture f;
  YoloxDecoder decoder(f.input, f.post);
  // 32x32 of the declared 64x32: stride 16 grid 2x2 (4 cells), then stride 32 1x1.
  ASSERT_EQ(decoder.anchorCount(32, 32), 5);
  Tensor raw = zeros(5, 8);
  // Anchor 3 = stride 16, cell (x=1, y=1) of the 2x2 grid (of the 4x2 one it would be x=3, y=0).
  setRow(raw, 3, {0.5F, 0.5F, 0.0F, 0.0F, 0.9F, 0.9F, 0.0F, 0.0F});
  // Anchor 4 = stride 32, cell (0, 0).
  setRow(raw, 4, {0.5F, 0.5F, 0.0F, 0.0F, 0.8F, 0.8F, 0.0F, 0.0F});
  LetterboxInfo lb{1.0F, 32, 32, 32, 32};
  std::vector<Detection> out;
  decoder.decode(raw, lb, 0.25F, {true, true, true}, out);
  ASSERT_EQ(out.size(), 2U);
  EXPECT_FLOAT_EQ(out[0].box.x, 1.5F * 16 - 8);
  EXPECT_FLOAT_EQ(out[0].box.y, 1.5F * 16 - 8);
  EXPECT_FLOAT_EQ(out[1].box.x, 0.5F * 32 - 16);
  EXPECT_FLOAT_EQ(out[1].box.y, 0.5F * 32 - 16);
}

TEST(YoloxDecoderTest, ScoreThresholdIsObjectnessTimesClass) {
  Fixture f;
  YoloxDecoder decoder(f.input, f.post);
  Tensor raw = zeros(10, 8);
  setRow(raw, 0, {0, 0, 0, 0, 0.5F, 0.59F, 0, 0});  // 0.295 < 0.3
  setRow(raw, 1, {0, 0, 0, 0, 0.5F, 0.61F, 0, 0});  // 0.305 >= 0.3
  std::vector<Detection> out;
  decoder.decode(raw, LetterboxInfo{1, 64, 32}, 0.3F, {true, true, true}, out);
  ASSERT_EQ(out.size(), 1U);
  EXPECT_FLOAT_EQ(out[0].box.x, 16.0F - 8.0F);  // anchor 1: cell x=1
}

TEST(YoloxDecoderTest, BestClassMustBeWanted) {
  // YOLOX's rule: the anchor's best class decides. A car-best anchor is not reported as a
  // person even though its person score passes the threshold.
  Fixture f;
  YoloxDecoder decoder(f.input, f.post);
  Tensor raw = zeros(10, 8);
  setRow(raw, 2, {0, 0, 0, 0, 0.9F, 0.6F, 0.7F, 0});
  setRow(raw, 3, {0, 0, 0, 0, 0.9F, 0.2F, 0.1F, 0.8F});
  std::vector<Detection> out;
  decoder.decode(raw, LetterboxInfo{1, 64, 32}, 0.1F, {true, false, true}, out);
  ASSERT_EQ(out.size(), 1U);
  EXPECT_EQ(out[0].classId, 2);
  EXPECT_FLOAT_EQ(out[0].score, 0.9F * 0.8F);
}

TEST(YoloxDecoderTest, RawLogitsAreActivatedWhenTheManifestSaysSo) {
  Fixture f;
  f.post.scoresActivated = false;
  YoloxDecoder decoder(f.input, f.post);
  Tensor raw = zeros(10, 8);
  for (int a = 0; a < 10; ++a) setRow(raw, a, {0, 0, 0, 0, -10.0F, 0, 0, 0});  // objectness ~0
  setRow(raw, 0, {0, 0, 0, 0, 0.0F, 0.0F, -5, -5});  // sigmoid(0) = 0.5 each: score 0.25
  std::vector<Detection> out;
  decoder.decode(raw, LetterboxInfo{1, 64, 32}, 0.2F, {true, true, true}, out);
  ASSERT_EQ(out.size(), 1U);
  EXPECT_FLOAT_EQ(out[0].score, 0.25F);
}

}  // namespace
}  // namespace vigil
