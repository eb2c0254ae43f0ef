#include "daemon/base/log_rate_limit.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

using namespace std::chrono_literals;

TEST(LogRateLimitTest, OneLineAMinutePerKey) {
  LogRateLimit limit;
  const LogRateLimit::Clock::time_point t0{};
  EXPECT_TRUE(limit.due("10.0.0.1", t0 + 1s));
  EXPECT_FALSE(limit.due("10.0.0.1", t0 + 30s));
  EXPECT_TRUE(limit.due("10.0.0.2", t0 + 30s)) << "another key has its own minute";
  EXPECT_FALSE(limit.due("10.0.0.1", t0 + 60s)) << "a minute after the line, not after the ask";
  EXPECT_TRUE(limit.due("10.0.0.1", t0 + 61s));
  EXPECT_FALSE(limit.due("10.0.0.1", t0 + 90s));
}

TEST(LogRateLimitTest, AFullTableForgetsRatherThanGrows) {
  LogRateLimit limit;
  const LogRateLimit::Clock::time_point t0{};
  for (std::size_t i = 0; i < LogRateLimit::kMaxKeys; ++i) {
    EXPECT_TRUE(limit.due(std::to_string(i), t0));
  }
  EXPECT_FALSE(limit.due("0", t0 + 1s));
  EXPECT_TRUE(limit.due("one more", t0 + 1s));
  EXPECT_TRUE(limit.due("0", t0 + 2s)) << "forgotten when the table was full";
}

}  // namespace
}  // namespace vigil
