#include "daemon/pipeline/detector_load.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

using namespace std::chrono_literals;

// A detector busy `fraction` of every second for `durationS` seconds, observed every 200 ms (the
// daemon's tick), from `t` on; returns what observe() said, in order.
std::vector<DetectorLoad::Change> feed(DetectorLoad& load, SteadyClock::time_point& t, double& busy,
                                       double fraction, int durationS) {
  std::vector<DetectorLoad::Change> changes;
  for (int tick = 0; tick < durationS * 5; ++tick) {
    t += 200ms;
    busy += 0.2 * fraction;
    if (auto c = load.observe(t, busy)) changes.push_back(*c);
  }
  return changes;
}

TEST(DetectorLoadTest, SaysOnceWhenTheDetectorCannotKeepUpAndOnceWhenItCanAgain) {
  DetectorLoad load(1);
  SteadyClock::time_point t{};
  double busy = 0;
  load.observe(t, busy);
  EXPECT_TRUE(feed(load, t, busy, 0.5, 120).empty()) << "half busy is keeping up";

  auto saturated = feed(load, t, busy, 0.97, 120);
  ASSERT_EQ(saturated.size(), 1U) << "once, not per window";
  EXPECT_TRUE(saturated[0].saturated);
  EXPECT_NEAR(saturated[0].busyFraction, 0.97, 0.01);
  EXPECT_NE(saturated[0].message.find("raise detector.threads (now 1)"), std::string::npos)
      << saturated[0].message;

  EXPECT_TRUE(feed(load, t, busy, 0.8, 60).empty()) << "between the two marks nothing changes";
  auto recovered = feed(load, t, busy, 0.3, 60);
  ASSERT_EQ(recovered.size(), 1U);
  EXPECT_FALSE(recovered[0].saturated);
  EXPECT_NE(recovered[0].message.find("keeps up again"), std::string::npos);
}

TEST(DetectorLoadTest, ANewWorkerStartsAFreshWindow) {
  DetectorLoad load(0);
  SteadyClock::time_point t{};
  double busy = 0;
  load.observe(t, busy);
  feed(load, t, busy, 1.0, 20);  // 20 s busy, not yet a whole window
  busy = 0;                      // a reload made a new worker: its total starts again
  EXPECT_FALSE(load.observe(t + 1s, busy).has_value());
  auto changes = feed(load, t, busy, 1.0, 40);
  ASSERT_EQ(changes.size(), 1U);
  EXPECT_NE(changes[0].message.find("(now every hardware thread)"), std::string::npos);
}

}  // namespace
}  // namespace vigil
