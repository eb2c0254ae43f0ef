// When a camera opens its source again: doubling to the maximum, the maximum at once after a
// configuration problem, the initial delay again once a session streamed; opens that failed
// and reconnects counted.
#include "daemon/capture/camera/reopen_backoff.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

using namespace std::chrono_literals;

const BackoffPolicy kPolicy{100ms, 500ms, 1000ms};

TEST(ReopenBackoffTest, DoublesFromTheInitialDelayUpToTheMaximum) {
  CameraCounters counters;
  ReopenBackoff reopen(kPolicy, counters);
  EXPECT_EQ(reopen.delay(), 100ms);
  reopen.lengthened();
  EXPECT_EQ(reopen.delay(), 200ms);
  reopen.lengthened();
  EXPECT_EQ(reopen.delay(), 400ms);
  reopen.lengthened();
  EXPECT_EQ(reopen.delay(), 500ms);
  reopen.lengthened();
  EXPECT_EQ(reopen.delay(), 500ms);
}

TEST(ReopenBackoffTest, AConfigurationProblemWaitsTheLongestAtOnceAndOtherFailuresDoNot) {
  CameraCounters counters;
  ReopenBackoff reopen(kPolicy, counters);
  reopen.openFailed(Error{ErrorCode::kUnavailable, "gone"});
  EXPECT_EQ(reopen.delay(), 100ms);
  reopen.openFailed(Error{ErrorCode::kInvalidArgument, "no such format"});
  EXPECT_EQ(reopen.delay(), 500ms);
  ReopenBackoff other(kPolicy, counters);
  other.openFailed(Error{ErrorCode::kUnsupported, "not a capture device"});
  EXPECT_EQ(other.delay(), 500ms);
  EXPECT_EQ(counters.openFailures.load(), 3U);
}

TEST(ReopenBackoffTest, ASessionThatStreamedStartsItOverAndMakesTheNextOpenAReconnect) {
  CameraCounters counters;
  ReopenBackoff reopen(kPolicy, counters);
  reopen.opened();
  EXPECT_EQ(counters.reconnects.load(), 0U) << "the first open is no reconnect";
  reopen.lengthened();
  reopen.lengthened();
  reopen.streamed();
  EXPECT_TRUE(reopen.everStreamed());
  EXPECT_EQ(reopen.delay(), 100ms);
  reopen.opened();
  EXPECT_EQ(counters.reconnects.load(), 1U);
}

}  // namespace
}  // namespace vigil
