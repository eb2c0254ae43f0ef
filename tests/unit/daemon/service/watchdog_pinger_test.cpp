// systemd's watchdog pinged while the daemon is healthy (WatchdogPinger), on its own, over a
// real notification socket: pings at half the timeout while health answers 200, withheld with
// one log line and one status line per unhealthy spell, and nothing outside systemd.
#include "daemon/service/watchdog_pinger.h"

#include <gtest/gtest.h>
#include <unistd.h>

// clang-format off
// Boost 1.74's asio uses std::exchange without including <utility> (fails with g++ 12, C++20).
#include <utility>
#include <boost/asio/post.hpp>
// clang-format on

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>

#include "tests/log_capture.h"
#include "tests/notify_socket.h"
#include "tests/occurrences.h"
#include "tests/temp_dir.h"
#include "tests/wait.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;

// A health answer the test sets, and how often it was asked (once per interval).
struct TestHealth {
  std::atomic<bool> healthy{true};
  std::atomic<int> asked{0};
  HttpResponse operator()() {
    ++asked;
    if (healthy) return HttpResponse{.body = "ok\n", .headers = {}};
    return HttpResponse{.status = 503, .body = "[cam=door] capture thread late", .headers = {}};
  }
};

class WatchdogPingerTest : public ::testing::Test {
 protected:
  void TearDown() override {
    stopServing();
    unsetenv("NOTIFY_SOCKET");
    unsetenv("WATCHDOG_USEC");
    unsetenv("WATCHDOG_PID");
  }
  // systemd's environment for a service with WatchdogSec=0.2 s.
  void underSystemd() {
    setenv("NOTIFY_SOCKET", (dir.path() / "notify").c_str(), 1);
    setenv("WATCHDOG_USEC", "200000", 1);
    setenv("WATCHDOG_PID", std::to_string(getpid()).c_str(), 1);
  }
  void serve() {
    serving = std::thread([this] { io.run(); });
  }
  void stopServing() {
    if (!serving.joinable()) return;
    io.stop();
    serving.join();
  }
  // The health asked `n` more times from now: that many intervals passed.
  bool intervalsPass(int n) {
    const int from = health.asked.load();
    return testing::waitUntil([&] { return health.asked.load() >= from + n; });
  }
  // Everything the socket holds now (its receive wakes every 0.2 s to see there is no more).
  std::vector<std::string> drain() {
    std::vector<std::string> out;
    while (auto m = socket.receive(1ms)) out.push_back(*m);
    return out;
  }

  TempDir dir;
  testing::NotifySocket socket{dir.path() / "notify"};
  boost::asio::io_context io;
  TestHealth health;
  std::thread serving;
};

TEST_F(WatchdogPingerTest, AHealthyDaemonPingsTheWatchdogAtHalfItsTimeout) {
  ASSERT_TRUE(socket.bound());
  underSystemd();
  SystemdNotifier notifier;
  testing::LogCapture log("daemon");
  WatchdogPinger pinger(io, notifier, std::ref(health));
  pinger.start();
  EXPECT_EQ(health.asked.load(), 0) << "the first ping after half the timeout, not at once";
  serve();
  EXPECT_TRUE(socket.waitFor("WATCHDOG=1", testing::kDeadline));
  ASSERT_TRUE(intervalsPass(2));
  stopServing();
  const auto said = drain();
  EXPECT_GE(std::count(said.begin(), said.end(), "WATCHDOG=1"), 1) << "a ping every interval";
  EXPECT_EQ(log.text(), "systemd watchdog: 0.2 s; pinged while every thread is healthy\n");
}

TEST_F(WatchdogPingerTest, AnUnhealthyDaemonWithholdsThePingAndSaysSoOncePerSpell) {
  ASSERT_TRUE(socket.bound());
  underSystemd();
  SystemdNotifier notifier;
  health.healthy = false;
  testing::LogCapture log("daemon");
  WatchdogPinger pinger(io, notifier, std::ref(health));
  pinger.start();
  serve();
  ASSERT_TRUE(intervalsPass(3));
  std::vector<std::string> said = drain();
  EXPECT_EQ(said, std::vector<std::string>{"STATUS=unhealthy: [cam=door] capture thread late"})
      << "no ping, and the status line once";

  health.healthy = true;  // well again: pings come back
  EXPECT_TRUE(socket.waitFor("WATCHDOG=1", testing::kDeadline));
  health.healthy = false;  // a new spell is said again
  EXPECT_TRUE(socket.waitFor("STATUS=unhealthy: ", testing::kDeadline));
  stopServing();
  EXPECT_EQ(
      testing::occurrences(log.text(),
                           "withholding the systemd watchdog ping: [cam=door] capture thread late"),
      2U)
      << log.text();
}

TEST_F(WatchdogPingerTest, OutsideSystemdOrWithoutAWatchdogNothingIsScheduled) {
  unsetenv("NOTIFY_SOCKET");
  unsetenv("WATCHDOG_USEC");
  SystemdNotifier notifier;
  WatchdogPinger pinger(io, notifier, std::ref(health));
  pinger.start();
  EXPECT_EQ(io.run(), 0U) << "no timer to run";
  EXPECT_EQ(health.asked.load(), 0);
}

}  // namespace
}  // namespace vigil
