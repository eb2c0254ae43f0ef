#include "daemon/mqtt/reconnect_backoff.h"

#include <gtest/gtest.h>

#include <chrono>

namespace vigil {
namespace {

using namespace std::chrono_literals;
using BackoffClock = std::chrono::steady_clock;

// The pause before the next attempt, measured around the call that sets it: the backoff reads
// the steady clock itself, so the pause lies between the two readings' differences.
void expectPause(ReconnectBackoff& backoff, void (ReconnectBackoff::*told)(),
                 std::chrono::milliseconds pause) {
  const auto before = BackoffClock::now();
  (backoff.*told)();
  const auto after = BackoffClock::now();
  EXPECT_GE(backoff.nextAttempt(), before + pause);
  EXPECT_LE(backoff.nextAttempt(), after + pause);
}

TEST(ReconnectBackoffTest, StartsAtOnce) {
  ReconnectBackoff backoff(100ms, 400ms);
  const auto before = BackoffClock::now();
  backoff.startNow();
  EXPECT_GE(backoff.nextAttempt(), before);
  EXPECT_LE(backoff.nextAttempt(), BackoffClock::now());
}

TEST(ReconnectBackoffTest, FailuresDoubleThePauseUpToTheMaximum) {
  ReconnectBackoff backoff(100ms, 400ms);
  expectPause(backoff, &ReconnectBackoff::failed, 100ms);
  expectPause(backoff, &ReconnectBackoff::failed, 200ms);
  expectPause(backoff, &ReconnectBackoff::failed, 400ms);
  expectPause(backoff, &ReconnectBackoff::failed, 400ms);
}

TEST(ReconnectBackoffTest, AConnectStartsTheDoublingAgain) {
  ReconnectBackoff backoff(100ms, 400ms);
  backoff.failed();
  backoff.failed();
  backoff.connected();
  expectPause(backoff, &ReconnectBackoff::failed, 100ms);
}

TEST(ReconnectBackoffTest, ALostConnectionWaitsTheMinimumAndFailuresDoubleFromThere) {
  ReconnectBackoff backoff(100ms, 1000ms);
  backoff.failed();
  backoff.failed();
  backoff.failed();
  expectPause(backoff, &ReconnectBackoff::lost, 100ms);
  expectPause(backoff, &ReconnectBackoff::failed, 200ms);
}

TEST(ReconnectBackoffTest, CountsTheAttemptsAfterTheFirstAsReconnects) {
  ReconnectBackoff backoff(100ms, 400ms);
  EXPECT_EQ(backoff.reconnects(), 0U);
  backoff.countAttempt();
  EXPECT_EQ(backoff.reconnects(), 0U);
  backoff.countAttempt();
  backoff.countAttempt();
  EXPECT_EQ(backoff.reconnects(), 2U);
}

}  // namespace
}  // namespace vigil
