// The error vocabulary shared from the backends up to the command line, and the count of work a
// stop leaves running.
#include "foundation/error.h"

#include <gtest/gtest.h>

#include "foundation/background_work.h"

namespace vigil {
namespace {

Expected<int> parsePort(int port) {
  if (port <= 0) return makeError(ErrorCode::kInvalidArgument, "port {} is not above 0", port);
  return port;
}

TEST(ErrorTest, MakeErrorKeepsTheCodeAndFormatsTheMessage) {
  auto bad = parsePort(-2);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(bad.error().message, "port -2 is not above 0");
  EXPECT_EQ(parsePort(80).value(), 80);
}

TEST(ErrorTest, EveryCodeHasItsOwnName) {
  EXPECT_EQ(errorCodeName(ErrorCode::kNotFound), "not found");
  EXPECT_EQ(errorCodeName(ErrorCode::kNotOnNpu), "not on the NPU");
  EXPECT_NE(errorCodeName(ErrorCode::kTimeout), errorCodeName(ErrorCode::kUnavailable));
}

TEST(BackgroundWorkTest, CountsDetachedWorkUntilItEnds) {
  const int before = background::detachedRunning();
  background::detachedStarted();
  background::detachedStarted();
  EXPECT_EQ(background::detachedRunning(), before + 2);
  background::detachedEnded();
  background::detachedEnded();
  EXPECT_EQ(background::detachedRunning(), before);
}

}  // namespace
}  // namespace vigil
