#include "daemon/mqtt/delivery_window.h"

#include <gtest/gtest.h>
#include <mqtt/async_client.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>

#include "daemon/mqtt/paho_options.h"
#include "tests/log_capture.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;

// The client's side of the window: its mutex, its condition variable, its connected flag.
struct ClientSide {
  std::mutex mutex;
  std::condition_variable wake;
  std::atomic<bool> connected{false};
};

TEST(DeliveryWindowTest, QueuesAndCountsWhatAFullBufferDrops) {
  ClientSide client;
  DeliveryWindow window(2, 1, client.mutex, client.wake, client.connected);
  window.publish("a", "1", false);
  window.publish("b", "2", false);
  EXPECT_EQ(window.bufferedNow(), 2U);
  EXPECT_EQ(window.dropped(), 0U);
  window.publish("c", "3", false);
  EXPECT_EQ(window.bufferedNow(), 2U);
  EXPECT_EQ(window.dropped(), 1U);
  EXPECT_EQ(window.published(), 0U);
  std::lock_guard lock(client.mutex);
  EXPECT_EQ(window.size(), 2U);
  EXPECT_TRUE(window.hasUnsent());
}

TEST(DeliveryWindowTest, AMessagePahoCannotMakeIsCountedAsDropped) {
  ClientSide client;
  DeliveryWindow window(10, 3, client.mutex, client.wake, client.connected);  // no QoS 3
  window.publish("a", "1", false);
  EXPECT_EQ(window.dropped(), 1U);
  EXPECT_EQ(window.bufferedNow(), 0U);
}

TEST(DeliveryWindowTest, AFailedHandOverKeepsTheMessagesToResendAfterAPause) {
  ClientSide client;
  DeliveryWindow window(10, 1, client.mutex, client.wake, client.connected);
  window.publish("a", "1", false);
  window.publish("b", "2", false);
  // Never connected: Paho refuses the first message.
  auto paho =
      makePahoClient("tcp://127.0.0.1:1", "delivery-window-test", [](const std::string&) {});
  std::unique_lock lock(client.mutex);
  EXPECT_FALSE(window.handOver(lock, *paho));
  EXPECT_TRUE(lock.owns_lock());
  EXPECT_FALSE(window.hasUnsent());  // the window was taken
  EXPECT_EQ(window.size(), 2U);      // and nothing acknowledged
  const auto before = std::chrono::steady_clock::now();
  window.resendAfterPause(lock);
  EXPECT_GE(std::chrono::steady_clock::now() - before, 90ms);  // nothing woke it early
  EXPECT_TRUE(lock.owns_lock());
  EXPECT_TRUE(window.hasUnsent());
}

TEST(DeliveryWindowTest, AFinalMessageIsQueuedOnlyWhenConnectedAndWarnsWhenLeft) {
  ClientSide client;
  DeliveryWindow window(10, 1, client.mutex, client.wake, client.connected);
  window.deliverFinal("vigil/status", "offline", 20ms);
  EXPECT_EQ(window.bufferedNow(), 0U);

  client.connected = true;
  testing::LogCapture log("mqtt");
  window.deliverFinal("vigil/status", "offline", 20ms);  // nobody delivers it
  EXPECT_EQ(window.bufferedNow(), 1U);
  EXPECT_NE(log.text().find("stopping with 1 message(s) not delivered (final 'vigil/status' "
                            "included)"),
            std::string::npos)
      << log.text();
}

}  // namespace
}  // namespace vigil
