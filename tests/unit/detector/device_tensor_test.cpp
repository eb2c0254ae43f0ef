#include "detector/npu/device_tensor.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace vigil {
namespace {

Tensor ramp(std::vector<std::int64_t> shape, float step) {
  Tensor t;
  t.resize(std::move(shape));
  for (std::size_t i = 0; i < t.data.size(); ++i) t.data[i] = static_cast<float>(i) * step - 1.0F;
  return t;
}

DeviceTensorSpec spec(std::string layout, std::string dtype, std::vector<std::int64_t> shape) {
  DeviceTensorSpec s;
  s.name = "x";
  s.layout = std::move(layout);
  s.dtype = std::move(dtype);
  s.shape = std::move(shape);
  return s;
}

TEST(DeviceTensorTest, Float32NchwIsACopy) {
  Tensor t = ramp({1, 2, 3, 4}, 0.5F);
  auto s = spec("NCHW", "float32", {1, 2, 3, 4});
  std::vector<std::byte> buf(s.byteSize());
  ASSERT_TRUE(packTensor(t, s, buf));
  EXPECT_EQ(std::memcmp(buf.data(), t.data.data(), buf.size()), 0);
}

TEST(DeviceTensorTest, NhwcPutsChannelsInnermostAndRoundTrips) {
  Tensor t = ramp({1, 2, 3, 4}, 1.0F);
  auto s = spec("NHWC", "float32", {1, 3, 4, 2});
  std::vector<std::byte> buf(s.byteSize());
  ASSERT_TRUE(packTensor(t, s, buf));
  const auto* f = reinterpret_cast<const float*>(buf.data());
  // NCHW element (c=1, y=2, x=3) is at (2*4+3)*2+1 in NHWC.
  EXPECT_FLOAT_EQ(f[(2 * 4 + 3) * 2 + 1], t.data[(1 * 3 + 2) * 4 + 3]);
  Tensor back;
  back.resize({1, 2, 3, 4});
  ASSERT_TRUE(unpackTensor(buf, s, back));
  EXPECT_EQ(back.data, t.data);
}

TEST(DeviceTensorTest, Int8QuantizesRoundsAndSaturates) {
  Tensor t;
  t.resize({1, 1, 1, 4});
  t.data = {0.26F, -0.26F, 100.0F, -100.0F};
  auto s = spec("NCHW", "int8", {1, 1, 1, 4});
  s.scale = 0.1F;
  s.zeroPoint = 3;
  std::vector<std::byte> buf(s.byteSize());
  ASSERT_TRUE(packTensor(t, s, buf));
  const auto* q = reinterpret_cast<const std::int8_t*>(buf.data());
  EXPECT_EQ(q[0], 6);  // round(2.6) + 3
  EXPECT_EQ(q[1], 0);  // round(-2.6) + 3
  EXPECT_EQ(q[2], 127);
  EXPECT_EQ(q[3], -128);
  Tensor back;
  back.resize({1, 1, 1, 4});
  ASSERT_TRUE(unpackTensor(buf, s, back));
  EXPECT_NEAR(back.data[0], 0.3F, 1e-6);
  EXPECT_NEAR(back.data[2], 12.4F, 1e-5);
}

TEST(DeviceTensorTest, Uint8AndBf16StayWithinHalfAStep) {
  Tensor t = ramp({1, 3, 2, 2}, 0.37F);
  auto u = spec("NHWC", "uint8", {1, 2, 2, 3});
  u.scale = 0.05F;
  u.zeroPoint = 40;
  auto b = spec("NCHW", "bf16", {1, 3, 2, 2});
  for (const auto& s : {u, b}) {
    std::vector<std::byte> buf(s.byteSize());
    ASSERT_TRUE(packTensor(t, s, buf));
    Tensor back;
    back.resize({1, 3, 2, 2});
    ASSERT_TRUE(unpackTensor(buf, s, back));
    for (std::size_t i = 0; i < t.data.size(); ++i) {
      float tol = s.dtype == "bf16" ? std::abs(t.data[i]) / 128.0F : s.scale / 2 + 1e-6F;
      EXPECT_NEAR(back.data[i], t.data[i], tol) << s.dtype << " " << i;
    }
  }
}

// mlir-aie's conv2d activations: rows, then blocks of 8 channels, then x, then the block's 8
// channels; 9 channels take two blocks, the second padded with 7 zero channels.
TEST(DeviceTensorTest, Ycxc8BlocksChannelsByEightAndPadsWithZeros) {
  Tensor t;
  t.resize({1, 9, 2, 2});
  for (std::int64_t c = 0; c < 9; ++c) {
    for (std::int64_t y = 0; y < 2; ++y) {
      for (std::int64_t x = 0; x < 2; ++x) {
        t.data[(c * 2 + y) * 2 + x] = static_cast<float>(100 * c + 10 * y + x);
      }
    }
  }
  auto s = spec("YCXC8", "float32", {1, 9, 2, 2});
  ASSERT_EQ(s.byteSize(), 16U * 2 * 2 * sizeof(float));
  std::vector<float> buf(s.byteSize() / sizeof(float), -1.0F);  // padding must be overwritten
  ASSERT_TRUE(packTensor(t, s, std::as_writable_bytes(std::span(buf))));
  const std::vector<float> want = {
      0,   100, 200, 300, 400, 500, 600, 700,  // y 0, channels 0-7, x 0
      1,   101, 201, 301, 401, 501, 601, 701,  //                     x 1
      800, 0,   0,   0,   0,   0,   0,   0,    // y 0, channels 8-15, x 0
      801, 0,   0,   0,   0,   0,   0,   0,    //                     x 1
      10,  110, 210, 310, 410, 510, 610, 710,  // y 1, channels 0-7, x 0
      11,  111, 211, 311, 411, 511, 611, 711,  //                     x 1
      810, 0,   0,   0,   0,   0,   0,   0,    // y 1, channels 8-15, x 0
      811, 0,   0,   0,   0,   0,   0,   0,    //                     x 1
  };
  EXPECT_EQ(buf, want);
  Tensor back;
  back.resize({1, 9, 2, 2});
  ASSERT_TRUE(unpackTensor(std::as_bytes(std::span(buf)), s, back));
  EXPECT_EQ(back.data, t.data);
}

TEST(DeviceTensorTest, Ycxc8RoundTripsQuantizedWithThreeChannelsPaddedToEight) {
  Tensor t = ramp({1, 3, 4, 5}, 0.02F);  // -1 to 0.18: within int8 at scale 0.01
  auto s = spec("YCXC8", "int8", {1, 3, 4, 5});
  s.scale = 0.01F;
  ASSERT_EQ(s.byteSize(), 8U * 4 * 5);
  std::vector<std::byte> buf(s.byteSize(), std::byte{0x7f});
  ASSERT_TRUE(packTensor(t, s, buf));
  for (std::size_t i = 0; i < buf.size(); ++i) {
    if (i % 8 >= 3) {
      EXPECT_EQ(buf[i], std::byte{0}) << "padding channel at byte " << i;
    }
  }
  Tensor back;
  back.resize({1, 3, 4, 5});
  ASSERT_TRUE(unpackTensor(buf, s, back));
  for (std::size_t i = 0; i < t.data.size(); ++i) {
    EXPECT_NEAR(back.data[i], t.data[i], s.scale / 2 + 1e-6F) << i;
  }
}

TEST(DeviceTensorTest, SizeMismatchIsAnError) {
  Tensor t = ramp({1, 2, 3, 4}, 1.0F);
  auto s = spec("NCHW", "float32", {1, 2, 3, 4});
  std::vector<std::byte> buf(s.byteSize() - 4);
  auto r = packTensor(t, s, buf);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace vigil
