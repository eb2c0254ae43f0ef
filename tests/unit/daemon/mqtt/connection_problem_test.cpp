// The MQTT client's latest connection failure on its own: kept for the status API, and warned
// about once per change of reason, not once per retry.
#include "daemon/mqtt/connection_problem.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/log_capture.h"
#include "tests/occurrences.h"

namespace vigil {
namespace {

constexpr const char* kBrokerUrl = "mqtts://broker.example:8883";

TEST(ConnectionProblemTest, AFailureIsKeptAndWarnedAboutWithTheBrokersUrl) {
  testing::LogCapture log("mqtt");
  ConnectionProblem problem(kBrokerUrl);
  EXPECT_EQ(problem.last(), "");
  problem.report("connection refused: server unavailable", true);
  EXPECT_EQ(problem.last(), "connection refused: server unavailable");
  EXPECT_EQ(log.text(),
            "connection refused: server unavailable for mqtts://broker.example:8883; retrying\n");
}

TEST(ConnectionProblemTest, AFailureNotRetriedDoesNotSayRetrying) {
  testing::LogCapture log("mqtt");
  ConnectionProblem problem(kBrokerUrl);
  problem.report("connection lost", false);
  EXPECT_EQ(log.text(), "connection lost for mqtts://broker.example:8883\n");
}

TEST(ConnectionProblemTest, TheSameReasonAgainIsOneLineAndAChangedReasonIsAnother) {
  testing::LogCapture log("mqtt");
  ConnectionProblem problem(kBrokerUrl);
  for (int retry = 0; retry < 5; ++retry) problem.report("cannot connect (timeout)", true);
  EXPECT_EQ(testing::occurrences(log.text(), "cannot connect (timeout)"), 1U) << log.text();
  problem.report("not authorized (bad user name or password)", true);
  EXPECT_EQ(problem.last(), "not authorized (bad user name or password)");
  problem.report("cannot connect (timeout)", true);
  EXPECT_EQ(problem.last(), "cannot connect (timeout)");
  EXPECT_EQ(testing::occurrences(log.text(), "not authorized"), 1U) << log.text();
  EXPECT_EQ(testing::occurrences(log.text(), "cannot connect (timeout)"), 2U)
      << "the reason changed back: a change too\n"
      << log.text();
}

TEST(ConnectionProblemTest, AfterAConnectionTheSameReasonIsWarnedAboutAgain) {
  testing::LogCapture log("mqtt");
  ConnectionProblem problem(kBrokerUrl);
  problem.report("connection lost", true);
  problem.connected();
  problem.report("connection lost", true);
  EXPECT_EQ(testing::occurrences(log.text(), "connection lost for"), 2U) << log.text();
}

TEST(ConnectionProblemTest, AKeptFailureIsTheLastWithoutALogLine) {
  testing::LogCapture log("mqtt");
  ConnectionProblem problem(kBrokerUrl);
  problem.keep("cannot create the MQTT client for mqtts://broker.example:8883: bad URI");
  EXPECT_EQ(problem.last(),
            "cannot create the MQTT client for mqtts://broker.example:8883: bad URI");
  EXPECT_EQ(log.text(), "");
}

}  // namespace
}  // namespace vigil
