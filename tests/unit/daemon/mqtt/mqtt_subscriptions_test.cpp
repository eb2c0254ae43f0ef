// What an MQTT client subscribes to (MqttSubscriptions), on its own: every filter subscribed again
// at each connect, the handler installed hearing their messages, a filter that cannot be
// subscribed logged and left, a stop cutting the renewal short; on a real broker where it takes
// one.
#include "daemon/mqtt/mqtt_subscriptions.h"

#include <gtest/gtest.h>
#include <mqtt/async_client.h>

#include <mutex>
#include <string>
#include <vector>

#include "daemon/mqtt/paho_options.h"
#include "tests/log_capture.h"
#include "tests/mosquitto_broker.h"
#include "tests/mqtt_subscriber.h"
#include "tests/occurrences.h"
#include "tests/wait.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;

// An await as the client's: the token within the limit, never stopped.
bool awaitSubscription(mqtt::token& token, std::optional<std::chrono::milliseconds> limit) {
  return awaitPahoToken(token, limit, [] { return false; });
}

TEST(MqttSubscriptionsTest, AFilterThatCannotBeSubscribedIsLoggedAndTheRenewalGoesOn) {
  testing::LogCapture log("mqtt");
  MqttSubscriptions subscriptions;
  subscriptions.add("homeassistant/status");
  subscriptions.add("vigil/cmd/#");
  auto client = makePahoClient("tcp://127.0.0.1:1", "vigil-subs", [](const std::string&) {});
  int awaited = 0;
  EXPECT_TRUE(subscriptions.renew(*client, 1, 1s,
                                  [&](mqtt::token&, std::optional<std::chrono::milliseconds>) {
                                    ++awaited;
                                    return true;
                                  }))
      << "not a stop";
  EXPECT_EQ(awaited, 0) << "a client that is not connected refuses each at once";
  EXPECT_EQ(testing::occurrences(log.text(), "cannot subscribe to homeassistant/status: "), 1U)
      << log.text();
  EXPECT_EQ(testing::occurrences(log.text(), "cannot subscribe to vigil/cmd/#: "), 1U)
      << log.text();
}

class MqttSubscriptionsBrokerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    VIGIL_REQUIRE_MOSQUITTO();
    ASSERT_TRUE(broker.start());
    client = makePahoClient("tcp://127.0.0.1:" + std::to_string(broker.port()), "vigil-subs",
                            [](const std::string&) {});
  }
  void TearDown() override {
    if (client) disconnectPaho(*client, 2s);
  }
  ::testing::AssertionResult connect() {
    MqttSettings s;
    s.url = broker.url();
    if (!client->connect(pahoConnectOptions(s, 10s, 10))->wait_for(testing::kBrokerReply)) {
      return ::testing::AssertionFailure() << "no CONNACK";
    }
    return ::testing::AssertionSuccess();
  }
  std::vector<std::string> heardNow() {
    std::lock_guard lock(mutex);
    return heard;
  }

  testing::MosquittoBroker broker;
  std::unique_ptr<mqtt::async_client> client;
  std::mutex mutex;
  std::vector<std::string> heard;
};

TEST_F(MqttSubscriptionsBrokerTest, EveryFilterIsSubscribedAtEachConnectAndTheHandlerHearsThem) {
  MqttSubscriptions subscriptions;
  subscriptions.add("homeassistant/status");
  subscriptions.add("vigil/cmd/#");
  subscriptions.setHandler([this](std::string topic, std::string payload) {
    std::lock_guard lock(mutex);
    heard.push_back(topic + " " + payload);
  });
  subscriptions.install(*client);
  testing::Subscriber other(broker.url(), "unused/#");
  ASSERT_TRUE(other.connect());

  for (int session = 0; session < 2; ++session) {  // clean sessions: the broker forgets
    ASSERT_TRUE(connect());
    ASSERT_TRUE(subscriptions.renew(*client, 1, 10s, awaitSubscription));
    ASSERT_TRUE(other.publish("elsewhere/x", "not ours", false));
    ASSERT_TRUE(other.publish("homeassistant/status", "online", false));
    ASSERT_TRUE(other.publish("vigil/cmd/reload", "now", false));
    const std::size_t expected = 2 * (session + 1);
    EXPECT_TRUE(testing::waitUntil([&] { return heardNow().size() >= expected; }));
    disconnectPaho(*client, 2s);
  }
  EXPECT_EQ(heardNow(),
            (std::vector<std::string>{"homeassistant/status online", "vigil/cmd/reload now",
                                      "homeassistant/status online", "vigil/cmd/reload now"}))
      << "in order, nothing of elsewhere/x (published first)";
}

TEST_F(MqttSubscriptionsBrokerTest, AStopWhileAwaitingASubscriptionEndsTheRenewal) {
  MqttSubscriptions subscriptions;
  subscriptions.add("homeassistant/status");
  subscriptions.add("vigil/cmd/#");
  ASSERT_TRUE(connect());
  int awaited = 0;
  EXPECT_FALSE(subscriptions.renew(*client, 1, 10s,
                                   [&](mqtt::token&, std::optional<std::chrono::milliseconds>) {
                                     ++awaited;
                                     return false;  // the client is stopping
                                   }));
  EXPECT_EQ(awaited, 1) << "the second filter is not asked for";
}

TEST_F(MqttSubscriptionsBrokerTest, EachSubscriptionIsAwaitedAtMostTheLimitGiven) {
  MqttSubscriptions subscriptions;
  subscriptions.add("homeassistant/status");
  subscriptions.add("vigil/cmd/#");
  ASSERT_TRUE(connect());
  std::vector<std::optional<std::chrono::milliseconds>> limits;
  EXPECT_TRUE(subscriptions.renew(
      *client, 1, 1234ms, [&](mqtt::token& token, std::optional<std::chrono::milliseconds> limit) {
        limits.push_back(limit);
        return awaitSubscription(token, limit);
      }));
  EXPECT_EQ(limits, (std::vector<std::optional<std::chrono::milliseconds>>{1234ms, 1234ms}));
}

}  // namespace
}  // namespace vigil
