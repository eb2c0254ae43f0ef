#include "detector/npu/run_watchdog.h"

#include <gtest/gtest.h>

#include <atomic>

#include "tests/wait.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;

TEST(RunWatchdogTest, CutsARunThatPassesItsTimeoutOnce) {
  RunWatchdog watchdog;
  std::atomic<int> cuts{0};
  watchdog.arm(20ms, [&] { cuts.fetch_add(1); });
  ASSERT_TRUE(testing::waitUntil([&] { return cuts.load() == 1; }));
  EXPECT_TRUE(testing::holdsFor([&] { return cuts.load() == 1; }, 100ms));
  EXPECT_TRUE(watchdog.disarm());
}

TEST(RunWatchdogTest, ARunThatEndsInTimeIsNotCut) {
  RunWatchdog watchdog;
  std::atomic<int> cuts{0};
  watchdog.arm(1h, [&] { cuts.fetch_add(1); });
  EXPECT_FALSE(watchdog.disarm());
  // Disarmed, it never cuts; armed again, it watches the new run only.
  EXPECT_TRUE(testing::holdsFor([&] { return cuts.load() == 0; }, 100ms));
  watchdog.arm(10ms, [&] { cuts.fetch_add(10); });
  ASSERT_TRUE(testing::waitUntil([&] { return cuts.load() == 10; }));
  EXPECT_TRUE(watchdog.disarm());
  watchdog.arm(1h, [&] { cuts.fetch_add(100); });
  EXPECT_FALSE(watchdog.disarm()) << "a cut belongs to the run it watched";
}

TEST(RunWatchdogTest, DestroyingAnArmedWatchdogDoesNotCut) {
  std::atomic<int> cuts{0};
  {
    RunWatchdog watchdog;
    watchdog.arm(1h, [&] { cuts.fetch_add(1); });
  }
  EXPECT_EQ(cuts.load(), 0);
}

}  // namespace
}  // namespace vigil
