#include "daemon/base/heartbeat.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

using namespace std::chrono_literals;

TEST(HeartbeatTest, OverdueOnlyAfterTheDeadline) {
  Heartbeat beat;
  const Heartbeat::Clock::time_point t0{std::chrono::seconds(1000)};
  EXPECT_FALSE(beat.overdueBy(t0).has_value()) << "a thread that promised nothing is not late";
  beat.expectWithin(5s, t0);
  EXPECT_FALSE(beat.overdueBy(t0 + 5s).has_value());
  ASSERT_TRUE(beat.overdueBy(t0 + 7s).has_value());
  EXPECT_EQ(*beat.overdueBy(t0 + 7s), 2s);
  beat.expectWithin(1s, t0 + 7s);  // it came back
  EXPECT_FALSE(beat.overdueBy(t0 + 7s).has_value());
  beat.idle();
  EXPECT_FALSE(beat.overdueBy(t0 + 10000s).has_value());
}

}  // namespace
}  // namespace vigil
