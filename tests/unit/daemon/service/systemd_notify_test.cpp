#include "daemon/service/systemd_notify.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "tests/notify_socket.h"
#include "tests/temp_dir.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;

using testing::NotifySocket;

class SystemdNotifyTest : public ::testing::Test {
 protected:
  void TearDown() override {
    unsetenv("NOTIFY_SOCKET");
    unsetenv("WATCHDOG_USEC");
    unsetenv("WATCHDOG_PID");
  }
  TempDir dir_;
};

TEST_F(SystemdNotifyTest, SpeaksTheProtocolOverARealDatagramSocket) {
  NotifySocket socket(dir_.path() / "notify");
  ASSERT_TRUE(socket.bound());
  setenv("NOTIFY_SOCKET", (dir_.path() / "notify").c_str(), 1);
  setenv("WATCHDOG_USEC", "4000000", 1);
  setenv("WATCHDOG_PID", std::to_string(getpid()).c_str(), 1);

  SystemdNotifier notifier;
  EXPECT_TRUE(notifier.active());
  ASSERT_TRUE(notifier.watchdogTimeout().has_value());
  EXPECT_EQ(*notifier.watchdogTimeout(), 4s);

  notifier.ready("2 camera(s), backend cpu");
  EXPECT_EQ(socket.receive(), "READY=1\nSTATUS=2 camera(s), backend cpu");
  notifier.status("unhealthy: [cam=a] late\n[cam=b] late\n");
  EXPECT_EQ(socket.receive(), "STATUS=unhealthy: [cam=a] late [cam=b] late ")
      << "a newline would start a new assignment";
  notifier.watchdog();
  EXPECT_EQ(socket.receive(), "WATCHDOG=1");
  notifier.reloading();
  auto reloading = socket.receive();
  ASSERT_TRUE(reloading.has_value());
  EXPECT_EQ(reloading->rfind("RELOADING=1\nMONOTONIC_USEC=", 0), 0U) << *reloading;
  notifier.stopping();
  EXPECT_EQ(socket.receive(), "STOPPING=1");
}

TEST_F(SystemdNotifyTest, WatchdogForAnotherProcessIsNotOurs) {
  setenv("WATCHDOG_USEC", "4000000", 1);
  setenv("WATCHDOG_PID", "1", 1);
  SystemdNotifier notifier;
  EXPECT_FALSE(notifier.watchdogTimeout().has_value());
}

TEST_F(SystemdNotifyTest, OutsideSystemdNothingIsSent) {
  NotifySocket socket(dir_.path() / "notify");
  ASSERT_TRUE(socket.bound());
  unsetenv("NOTIFY_SOCKET");
  SystemdNotifier notifier;
  EXPECT_FALSE(notifier.active());
  notifier.ready("x");
  notifier.watchdog();
  EXPECT_TRUE(socket.empty());
}

}  // namespace
}  // namespace vigil
