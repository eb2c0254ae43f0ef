// The daemon's publishing side (makePublishing, mqttSettings), on its own: the client's settings
// from the mqtt section, a publisher without MQTT, a section refused, and, on a real broker, the
// client made but not started, the publisher speaking through it with the status page's address
// for Home Assistant, and the publisher announcing again at Home Assistant's birth message and at
// every reconnect after the first.
#include "daemon/mqtt/publishing.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/log_capture.h"
#include "tests/mosquitto_broker.h"
#include "tests/mqtt_subscriber.h"
#include "tests/wait.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;

MqttConfig hallMqtt(const std::string& url) {
  MqttConfig c;
  c.enabled = true;
  c.url = url;
  c.clientId = "vigil-hall";
  c.topicPrefix = "vigil/hall";
  c.haPrefix = "homeassistant";
  c.haDiscovery = true;
  return c;
}

Config hallConfig(MqttConfig mqtt, const std::string& listen = "127.0.0.1:9842") {
  Config c;
  c.file = "/etc/vigil/cameras.yaml";
  c.node = "hall";
  c.mqtt = std::move(mqtt);
  c.http.listen = listen;
  return c;
}

PublishedCamera hallDoor() { return PublishedCamera{"door", {}, {}, {}, {}}; }

TEST(PublishingTest, TheClientsSettingsAreTheSectionsWithTheStatusTopicAsItsLastWill) {
  MqttConfig c = hallMqtt("mqtts://broker:8883");
  c.username = "cam";
  c.password = "secret";
  c.caFile = "/etc/vigil/ca.pem";
  c.certFile = "/etc/vigil/client.pem";
  c.keyFile = "/etc/vigil/client.key";
  c.qos = 0;
  c.keepAlive = 45;
  c.bufferMessages = 77;
  const MqttSettings s = mqttSettings(c);
  EXPECT_EQ(s.url, "mqtts://broker:8883");
  EXPECT_EQ(s.clientId, "vigil-hall");
  EXPECT_EQ(s.username, "cam");
  EXPECT_EQ(s.password, "secret");
  EXPECT_EQ(s.caFile, "/etc/vigil/ca.pem");
  EXPECT_EQ(s.certFile, "/etc/vigil/client.pem");
  EXPECT_EQ(s.keyFile, "/etc/vigil/client.key");
  EXPECT_EQ(s.qos, 0);
  EXPECT_EQ(s.keepAlive, 45s);
  EXPECT_EQ(s.bufferMessages, 77U);
  EXPECT_EQ(s.willTopic, "vigil/hall/status");
  EXPECT_EQ(s.willPayload, "offline");
}

TEST(PublishingTest, WithoutAnMqttSectionThereIsAPublisherAndNoClient) {
  setLogLevel(spdlog::level::info);
  testing::LogCapture log("daemon");
  MqttConfig off;
  off.enabled = false;
  auto publishing = makePublishing(hallConfig(off), [](std::function<void()> f) { f(); });
  ASSERT_TRUE(publishing.has_value()) << publishing.error().message;
  EXPECT_EQ(publishing->mqtt, nullptr);
  ASSERT_NE(publishing->publisher, nullptr);
  publishing->publisher->setCameras({hallDoor()});
  EXPECT_TRUE(publishing->publisher->state("door").has_value()) << "presence kept without MQTT";
  EXPECT_EQ(log.text(), "MQTT: off (no mqtt section in /etc/vigil/cameras.yaml)\n");
}

TEST(PublishingTest, AnMqttSectionTheClientCannotTakeIsRefused) {
  auto publishing = makePublishing(hallConfig(hallMqtt("http://broker:1883")),
                                   [](std::function<void()> f) { f(); });
  ASSERT_FALSE(publishing.has_value());
  EXPECT_NE(publishing.error().message.find("mqtt.url"), std::string::npos)
      << publishing.error().message;
}

// A real broker, and a control thread the test runs itself (control.poll()) where the client's
// callbacks are posted.
class PublishingBrokerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    VIGIL_REQUIRE_MOSQUITTO();
    ASSERT_TRUE(broker.start());
  }
  PostToControl post() {
    return [this](std::function<void()> f) { boost::asio::post(control, std::move(f)); };
  }
  std::string nodeConfigTopic() const { return "homeassistant/binary_sensor/hall/status/config"; }
  // The retained node discovery at this moment, the control thread run first.
  std::optional<std::string> retainedNodeConfig() {
    control.poll();
    return testing::retainedNow(broker.url(), nodeConfigTopic());
  }

  testing::MosquittoBroker broker;
  boost::asio::io_context control;
  // poll() with nothing to do would stop the io_context for good: it always has work.
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work =
      boost::asio::make_work_guard(control);
};

TEST_F(PublishingBrokerTest, TheClientIsNotStartedAndThePublisherSpeaksThroughIt) {
  auto publishing = makePublishing(hallConfig(hallMqtt(broker.url()), "0.0.0.0:9842"), post());
  ASSERT_TRUE(publishing.has_value()) << publishing.error().message;
  ASSERT_NE(publishing->mqtt, nullptr);
  publishing->publisher->setCameras({hallDoor()});
  EXPECT_FALSE(publishing->mqtt->connected()) << "not started";
  EXPECT_GT(publishing->mqtt->bufferedNow(), 0U) << "the publisher's messages wait in the client";

  publishing->mqtt->start();
  std::optional<std::string> node;
  ASSERT_TRUE(testing::waitUntil([&] { return (node = retainedNodeConfig()).has_value(); }));
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof host - 1), 0);
  EXPECT_EQ(nlohmann::json::parse(*node)["device"]["configuration_url"],
            "http://" + std::string(host) + ":9842/")
      << "HTTP on every address: the status page at this host's name";
  publishing->mqtt->stop("", "");
}

TEST_F(PublishingBrokerTest, AStatusPageOnLoopbackIsNotGivenToHomeAssistant) {
  auto publishing = makePublishing(hallConfig(hallMqtt(broker.url()), "127.0.0.1:9842"), post());
  ASSERT_TRUE(publishing.has_value()) << publishing.error().message;
  publishing->publisher->setCameras({hallDoor()});
  publishing->mqtt->start();
  std::optional<std::string> node;
  ASSERT_TRUE(testing::waitUntil([&] { return (node = retainedNodeConfig()).has_value(); }));
  EXPECT_FALSE(nlohmann::json::parse(*node)["device"].contains("configuration_url"));
  publishing->mqtt->stop("", "");
}

TEST_F(PublishingBrokerTest, HomeAssistantsBirthMakesThePublisherAnnounceAgain) {
  auto publishing = makePublishing(hallConfig(hallMqtt(broker.url())), post());
  ASSERT_TRUE(publishing.has_value()) << publishing.error().message;
  testing::Subscriber homeAssistant(broker.url(), nodeConfigTopic());
  ASSERT_TRUE(homeAssistant.connect());
  publishing->publisher->setCameras({hallDoor()});
  publishing->mqtt->start();
  auto nodeConfigs = [&](const std::vector<testing::Received>& r) {
    control.poll();
    return testing::payloadsOn(r, nodeConfigTopic()).size();
  };
  ASSERT_TRUE(homeAssistant.waitFor([&](const auto& r) { return nodeConfigs(r) >= 1; }));
  ASSERT_TRUE(testing::waitUntil([&] { return publishing->mqtt->connected(); }));
  ASSERT_TRUE(homeAssistant.publish("homeassistant/status", "online", false));
  EXPECT_TRUE(homeAssistant.waitFor([&](const auto& r) { return nodeConfigs(r) >= 2; }))
      << "announced again for the Home Assistant that just started";
  publishing->mqtt->stop("", "");
}

// A restarted broker without persistence has lost every retained message: the publisher says
// them again once the client is back.
TEST_F(PublishingBrokerTest, AReconnectAfterTheFirstAnnouncesAgain) {
  auto publishing = makePublishing(hallConfig(hallMqtt(broker.url())), post());
  ASSERT_TRUE(publishing.has_value()) << publishing.error().message;
  publishing->publisher->setCameras({hallDoor()});
  publishing->mqtt->start();
  ASSERT_TRUE(testing::waitUntil([&] { return retainedNodeConfig().has_value(); }));
  // Everything acknowledged: nothing is sent again merely because it was still in flight.
  ASSERT_TRUE(testing::waitUntil([&] { return publishing->mqtt->bufferedNow() == 0; }));
  ASSERT_TRUE(broker.restart());
  ASSERT_FALSE(testing::retainedNow(broker.url(), nodeConfigTopic()).has_value())
      << "the broker forgot it";
  EXPECT_TRUE(testing::waitUntil([&] { return retainedNodeConfig().has_value(); }));
  EXPECT_GE(publishing->mqtt->reconnects(), 1U);
  publishing->mqtt->stop("", "");
}

}  // namespace
}  // namespace vigil
