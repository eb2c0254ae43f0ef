#include "detector/verify.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace vigil {
namespace {

TEST(CheckFiniteTest, AcceptsFiniteValues) {
  std::vector<float> v{0, -1, 3.5F, std::numeric_limits<float>::max(),
                       std::numeric_limits<float>::denorm_min()};
  EXPECT_TRUE(checkFinite(v, "t").has_value());
}

TEST(CheckFiniteTest, NamesTheFirstNaN) {
  std::vector<float> v(1000, 1.0F);
  v[417] = std::nanf("");
  v[900] = std::numeric_limits<float>::infinity();
  auto r = checkFinite(v, "npu output");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidOutput);
  EXPECT_NE(r.error().message.find("npu output: element 417 of 1000"), std::string::npos)
      << r.error().message;
}

TEST(CheckFiniteTest, RejectsInfinity) {
  std::vector<float> v{1, -std::numeric_limits<float>::infinity()};
  auto r = checkFinite(v, "x");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("element 1"), std::string::npos);
}

// The check runs in lanes of eight and then the tail: a NaN or infinity of either sign is found
// wherever it stands, beside the largest finite values.
TEST(CheckFiniteTest, FindsANonFiniteValueAtEveryPosition) {
  const float bad[] = {std::nanf(""), -std::nanf(""), std::numeric_limits<float>::infinity(),
                       -std::numeric_limits<float>::infinity()};
  for (float b : bad) {
    for (std::size_t at = 0; at < 19; ++at) {
      std::vector<float> v(19, -std::numeric_limits<float>::max());
      v[at] = b;
      auto r = checkFinite(v, "out");
      ASSERT_FALSE(r.has_value()) << b << " at " << at;
      EXPECT_NE(r.error().message.find(fmt::format("element {} of 19", at)), std::string::npos)
          << r.error().message;
    }
  }
}

TEST(MaxAbsDiffTest, ReportsLargestDifferenceAndNaN) {
  std::vector<float> a{1, 2, 3};
  std::vector<float> b{1, 2.5F, 2.9F};
  EXPECT_FLOAT_EQ(maxAbsDiff(a, b), 0.5F);
  b[0] = std::nanf("");
  EXPECT_TRUE(std::isnan(maxAbsDiff(a, b)));
  EXPECT_TRUE(std::isinf(maxAbsDiff(a, std::vector<float>{1})));
}

}  // namespace
}  // namespace vigil
