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
