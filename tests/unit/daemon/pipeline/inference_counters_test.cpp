#include "daemon/pipeline/inference_counters.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tests/log_capture.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;
using CountersClock = std::chrono::steady_clock;

std::size_t linesIn(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(InferenceCountersTest, CountsSuccessesFailuresInvalidOutputsAndBusyTime) {
  InferenceCounters counters;
  counters.succeeded();
  counters.succeeded();
  const CountersClock::time_point t0{1h};
  counters.failed(Error{ErrorCode::kInvalidOutput, "NaN in the output"}, "door", t0);
  counters.failed(Error{ErrorCode::kUnavailable, "the NPU went away"}, "door", t0 + 20s);
  counters.busy(1500ms);
  counters.busy(250ms);
  EXPECT_EQ(counters.inferences(), 2U);
  EXPECT_EQ(counters.failures(), 2U);
  EXPECT_EQ(counters.invalidOutputs(), 1U);  // a subset of the failures
  EXPECT_DOUBLE_EQ(counters.busySeconds(), 1.75);
  // The same, as /metrics reads them (report): failures, invalid outputs, busy seconds.
  FigureList figures;
  counters.report(figures);
  EXPECT_EQ(figures.countOf("failures"), 2U);
  EXPECT_EQ(figures.countOf("invalid_outputs"), 1U);
  ASSERT_EQ(figures.figures().size(), 3U);
  EXPECT_EQ(figures.figures()[1].name->metric, "vigil_detector_busy_seconds_total");
  EXPECT_DOUBLE_EQ(std::get<double>(figures.figures()[1].value), 1.75);
}

TEST(InferenceCountersTest, AFailureIsLoggedOnceEveryTenSecondsSayingHowManyItPassedOver) {
  testing::LogCapture log("detector");
  InferenceCounters counters;
  const CountersClock::time_point t0{1h};
  const Error error{ErrorCode::kUnavailable, "backend lost"};
  counters.failed(error, "door", t0);
  counters.failed(error, "door", t0 + 1s);
  counters.failed(error, "yard", t0 + 9s);
  EXPECT_EQ(linesIn(log.text()), 1U);
  EXPECT_NE(log.text().find("[cam=door] detection failed: backend lost"), std::string::npos);
  counters.failed(error, "yard", t0 + 11s);
  EXPECT_EQ(linesIn(log.text()), 2U);
  EXPECT_NE(log.text().find("[cam=yard] detection failed: backend lost (2 more since the last "
                            "report)"),
            std::string::npos);
  EXPECT_EQ(counters.failures(), 4U);
}

}  // namespace
}  // namespace vigil
