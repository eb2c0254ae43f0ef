// Paho's options and the small calls around its client (paho_options), on their own: the connect
// options a client's settings give, and, on a real broker, the client made for a server, its
// message handler (whose exceptions stay out of Paho), the connection lost, a token awaited.
#include "daemon/mqtt/paho_options.h"

#include <gtest/gtest.h>
#include <mqtt/async_client.h>

#include <atomic>
#include <string>

#include "tests/log_capture.h"
#include "tests/mosquitto_broker.h"
#include "tests/mqtt_subscriber.h"
#include "tests/wait.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;

TEST(PahoOptionsTest, OnlyMqttsIsTls) {
  EXPECT_TRUE(isMqttTls("mqtts://broker:8883"));
  EXPECT_FALSE(isMqttTls("mqtt://broker:1883"));
  EXPECT_FALSE(isMqttTls("ssl://broker:8883")) << "Paho's own scheme is not a setting's";
  EXPECT_FALSE(isMqttTls("tcp://mqtts.example:1883"));
}

TEST(PahoOptionsTest, TheConnectOptionsAreAClean311SessionWithTheLoginTheWillAndNoPahoRetries) {
  MqttSettings s;
  s.url = "mqtt://broker:1883";
  s.username = "cam";
  s.password = "secret";
  s.keepAlive = 45s;
  s.qos = 0;
  s.willTopic = "vigil/status";
  s.willPayload = "offline";
  const mqtt::connect_options o = pahoConnectOptions(s, 7s, 10);
  EXPECT_EQ(o.get_mqtt_version(), MQTTVERSION_3_1_1);
  EXPECT_TRUE(o.is_clean_session());
  EXPECT_EQ(o.get_keep_alive_interval(), 45s);
  EXPECT_EQ(o.get_connect_timeout(), 7s);
  EXPECT_FALSE(o.get_automatic_reconnect()) << "the client reconnects itself";
  EXPECT_EQ(o.get_max_inflight(), 10);
  EXPECT_EQ(o.get_user_name(), "cam");
  EXPECT_EQ(o.get_password_str(), "secret");
  EXPECT_EQ(o.get_will_topic(), "vigil/status");
  ASSERT_NE(o.get_will_message(), nullptr);
  EXPECT_EQ(o.get_will_message()->to_string(), "offline");
  EXPECT_TRUE(o.get_will_options().is_retained());
  EXPECT_EQ(o.get_will_options().get_qos(), 0) << "the settings' qos";
}

TEST(PahoOptionsTest, WithoutLoginOrWillTopicTheOptionsHaveNeither) {
  MqttSettings s;
  s.url = "mqtt://broker:1883";
  s.willTopic = "";
  const mqtt::connect_options o = pahoConnectOptions(s, 5s, 1);
  EXPECT_EQ(o.get_user_name(), "");
  EXPECT_EQ(o.get_password_str(), "");
  EXPECT_EQ(o.get_will_topic(), "");
}

TEST(PahoOptionsTest, MqttsVerifiesTheServerWithTheGivenFilesAndMqttHasNoTls) {
  MqttSettings s;
  s.url = "mqtts://broker:8883";
  s.caFile = "/etc/vigil/ca.pem";
  s.certFile = "/etc/vigil/client.pem";
  s.keyFile = "/etc/vigil/client.key";
  const mqtt::connect_options tls = pahoConnectOptions(s, 5s, 1);
  EXPECT_TRUE(tls.get_ssl_options().get_enable_server_cert_auth());
  EXPECT_TRUE(tls.get_ssl_options().get_verify()) << "the host name is checked too";
  EXPECT_EQ(tls.get_ssl_options().get_trust_store(), "/etc/vigil/ca.pem");
  EXPECT_EQ(tls.get_ssl_options().get_key_store(), "/etc/vigil/client.pem");
  EXPECT_EQ(tls.get_ssl_options().get_private_key(), "/etc/vigil/client.key");

  s.url = "mqtt://broker:1883";
  const mqtt::connect_options plain = pahoConnectOptions(s, 5s, 1);
  EXPECT_EQ(plain.get_ssl_options().get_trust_store(), "") << "no TLS for mqtt://";
}

TEST(PahoOptionsTest, TheClientIsForTheServerAndDisconnectingOneNeverConnectedIsHarmless) {
  auto client =
      makePahoClient("tcp://127.0.0.1:1", "vigil-paho-options", [](const std::string&) {});
  EXPECT_EQ(client->get_server_uri(), "tcp://127.0.0.1:1");
  EXPECT_EQ(client->get_client_id(), "vigil-paho-options");
  disconnectPaho(*client, 100ms);  // does not throw
  EXPECT_FALSE(client->is_connected());
}

TEST(PahoOptionsTest, AwaitingATokenEndsAtItsLimitOrAtAStop) {
  auto client = makePahoClient("tcp://127.0.0.1:1", "vigil-await", [](const std::string&) {});
  mqtt::token never(mqtt::token::Type::CONNECT, *client);  // nothing will complete it
  EXPECT_TRUE(awaitPahoToken(never, 0ms, [] { return false; }))
      << "the limit passed: the caller looks at the token";
  int asked = 0;
  EXPECT_FALSE(awaitPahoToken(never, std::nullopt, [&] { return ++asked == 2; }))
      << "no limit: waits until the stop";
  EXPECT_EQ(asked, 2);
}

class PahoOptionsBrokerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    VIGIL_REQUIRE_MOSQUITTO();
    ASSERT_TRUE(broker.start());
  }
  std::string serverUri() const { return "tcp://127.0.0.1:" + std::to_string(broker.port()); }

  testing::MosquittoBroker broker;
};

TEST_F(PahoOptionsBrokerTest, AConnectTokenThatCompletesIsAwaitedAndTheHandlerHearsMessages) {
  testing::LogCapture log("mqtt");
  auto client = makePahoClient(serverUri(), "vigil-handler", [](const std::string&) {});
  std::mutex mutex;
  std::vector<std::string> heard;
  setPahoMessageHandler(*client, [&](std::string topic, std::string payload) {
    if (payload == "boom") throw std::runtime_error("cannot handle boom");
    std::lock_guard lock(mutex);
    heard.push_back(topic + " " + payload);
  });
  MqttSettings s;
  s.url = broker.url();
  auto connecting = client->connect(pahoConnectOptions(s, 10s, 10));
  ASSERT_TRUE(awaitPahoToken(*connecting, testing::kDeadline, [] { return false; }));
  ASSERT_TRUE(client->is_connected());
  ASSERT_TRUE(client->subscribe("vigil/test/#", 1)->wait_for(testing::kBrokerReply));

  testing::Subscriber other(broker.url(), "unused/#");
  ASSERT_TRUE(other.connect());
  ASSERT_TRUE(other.publish("vigil/test/a", "boom", false));
  ASSERT_TRUE(other.publish("vigil/test/b", "after", false));
  EXPECT_TRUE(testing::waitUntil([&] {
    std::lock_guard lock(mutex);
    return !heard.empty();
  }));
  {
    std::lock_guard lock(mutex);
    EXPECT_EQ(heard, std::vector<std::string>{"vigil/test/b after"})
        << "the handler goes on after one that threw";
  }
  disconnectPaho(*client, 2s);
  EXPECT_NE(log.text().find("handling a message on vigil/test/a failed: cannot handle boom"),
            std::string::npos)
      << log.text();
}

TEST_F(PahoOptionsBrokerTest, ABrokerThatVanishesCallsTheConnectionLostHandler) {
  std::atomic<bool> lost{false};
  auto client = makePahoClient(serverUri(), "vigil-lost", [&](const std::string&) { lost = true; });
  MqttSettings s;
  s.url = broker.url();
  ASSERT_TRUE(client->connect(pahoConnectOptions(s, 10s, 10))->wait_for(testing::kBrokerReply));
  broker.kill();
  EXPECT_TRUE(testing::waitUntil([&] { return lost.load(); }));
  disconnectPaho(*client, 100ms);
}

}  // namespace
}  // namespace vigil
