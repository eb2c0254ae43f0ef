#include "daemon/mqtt/mqtt_client.h"

#include <gtest/gtest.h>
#include <mqtt/async_client.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "daemon/mqtt/mqtt_figures.h"
#include "tests/mosquitto_broker.h"
#include "tests/mqtt_subscriber.h"
#include "tests/process.h"
#include "tests/temp_dir.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;
using testing::firstArrivals;
using testing::holdsFor;
using testing::MosquittoBroker;
using testing::payloadsOn;
using testing::Received;
using testing::retainedBecomes;
using testing::retainedNow;
using testing::Subscriber;
using testing::waitUntil;

MqttSettings settingsFor(const MosquittoBroker& broker, const std::string& clientId) {
  MqttSettings settings;
  settings.url = broker.url();
  settings.clientId = clientId;
  settings.minRetry = 100ms;
  settings.maxRetry = 400ms;
  settings.keepAlive = 5s;
  return settings;
}

TEST(MqttClientValidate, AcceptsMqttAndMqttsAndRejectsOtherSchemes) {
  MqttSettings settings;
  EXPECT_TRUE(validateMqttSettings(settings));
  settings.url = "mqtt://broker.local";
  EXPECT_TRUE(validateMqttSettings(settings));
  settings.url = "mqtts://[::1]:8883";
  EXPECT_TRUE(validateMqttSettings(settings));
  for (const char* bad :
       {"tcp://127.0.0.1:1883", "http://x:1", "127.0.0.1:1883", "mqtt://", "mqtt://h:0",
        "mqtt://h:99999", "mqtt://h:1883/x", "mqtt://user:secret@h:1883"}) {
    settings.url = bad;
    auto result = validateMqttSettings(settings);
    ASSERT_FALSE(result) << bad;
    EXPECT_EQ(result.error().code, ErrorCode::kInvalidArgument) << bad;
    EXPECT_NE(result.error().message.find("mqtt.url"), std::string::npos) << result.error().message;
    EXPECT_EQ(result.error().message.find("secret"), std::string::npos);
  }
  settings.url = "mqtt://127.0.0.1:1883";
  settings.caFile = "/etc/hostname";
  EXPECT_FALSE(validateMqttSettings(settings)) << "TLS files on a plain URL";
  settings.url = "mqtts://127.0.0.1:8883";
  settings.caFile = "/nonexistent/ca.crt";
  ASSERT_FALSE(validateMqttSettings(settings));
  EXPECT_EQ(validateMqttSettings(settings).error().code, ErrorCode::kNotFound);
  settings.caFile.clear();
  settings.qos = 3;
  EXPECT_FALSE(validateMqttSettings(settings));
}

TEST(MqttClientBuffer, KeepsNewestRetainedPerTopicAndDropsOldestNonRetained) {
  MqttSettings settings;
  settings.bufferMessages = 3;
  MqttClient client(settings);  // never started: everything stays queued
  client.publish("vigil/status", "a", true);
  client.publish("vigil/status", "b", true);
  client.publish("vigil/status", "c", true);
  EXPECT_EQ(client.bufferedNow(), 1u);
  EXPECT_EQ(client.dropped(), 0u) << "a replaced retained payload is not a loss";
  client.publish("vigil/event", "1", false);
  client.publish("vigil/event", "2", false);
  client.publish("vigil/event", "3", false);
  EXPECT_EQ(client.bufferedNow(), 3u);
  EXPECT_EQ(client.dropped(), 1u) << "event 1 was the oldest non-retained";
}

TEST(MqttClientBroker, RetainedAndNonRetainedArrive) {
  VIGIL_REQUIRE_MOSQUITTO();
  MosquittoBroker broker;
  ASSERT_TRUE(broker.start());
  Subscriber subscriber(broker.url(), "vigil/#");
  ASSERT_TRUE(subscriber.connect());

  MqttClient client(settingsFor(broker, "vigil-basic"));
  std::atomic<int> connects{0};
  client.setOnConnected([&] { connects++; });
  client.start();
  client.publish("vigil/status", "online", true);
  client.publish("vigil/front/person", "ON", false);

  ASSERT_TRUE(subscriber.waitForCount(2)) << broker.log();
  EXPECT_EQ(payloadsOn(subscriber.received(), "vigil/status"), std::vector<std::string>{"online"});
  EXPECT_EQ(payloadsOn(subscriber.received(), "vigil/front/person"),
            std::vector<std::string>{"ON"});
  EXPECT_TRUE(waitUntil([&] { return client.published() == 2; }));
  EXPECT_TRUE(client.connected());
  EXPECT_EQ(connects.load(), 1);
  EXPECT_EQ(client.bufferedNow(), 0u);
  // Only the retained one is held by the broker for a later subscriber (both were delivered
  // above, so what is retained now is final).
  EXPECT_EQ(retainedNow(broker.url(), "vigil/status"), "online");
  EXPECT_EQ(retainedNow(broker.url(), "vigil/front/person"), std::nullopt);
}

TEST(MqttClientBroker, StopPublishesFinalRetainedOfflineNotTheWill) {
  VIGIL_REQUIRE_MOSQUITTO();
  MosquittoBroker broker;
  ASSERT_TRUE(broker.start());
  auto settings = settingsFor(broker, "vigil-stop");
  settings.willTopic = "vigil/status";
  settings.willPayload = "lost";  // distinct from the clean "offline", to tell them apart
  MqttClient client(settings);
  client.start();
  client.publish("vigil/status", "online", true);
  ASSERT_TRUE(retainedBecomes(broker.url(), "vigil/status", "online"));

  auto started = std::chrono::steady_clock::now();
  client.stop("vigil/status", "offline");
  EXPECT_WITHIN(std::chrono::steady_clock::now() - started, 5s);
  EXPECT_FALSE(client.connected());
  // stop() returns after the broker acknowledged "offline", so it is retained already.
  EXPECT_EQ(retainedNow(broker.url(), "vigil/status"), "offline");
  // And it stays "offline": a clean disconnect does not fire the will (mosquitto would
  // publish it at once), given a second to do the wrong thing.
  EXPECT_TRUE(holdsFor([&] { return retainedNow(broker.url(), "vigil/status") == "offline"; }, 1s));
}

// Runs in a child process (the test binary itself, see LastWillAfterSigkill): connects with a
// last will, says READY, and waits to be killed.
TEST(MqttClientBroker, DISABLED_WillHelper) {
  const char* url = std::getenv("VIGIL_TEST_MQTT_WILL_URL");
  if (url == nullptr) GTEST_SKIP() << "only run by LastWillAfterSigkill";
  MqttSettings settings;
  settings.url = url;
  settings.clientId = "vigil-will";
  settings.willTopic = "vigil/status";
  settings.willPayload = "offline";
  MqttClient client(settings);
  client.start();
  client.publish("vigil/status", "online", true);
  ASSERT_TRUE(waitUntil([&] { return client.published() >= 1; }));
  std::cout << "READY" << std::endl;
  std::this_thread::sleep_for(60s);
}

TEST(MqttClientBroker, LastWillAfterSigkill) {
  VIGIL_REQUIRE_MOSQUITTO();
  MosquittoBroker broker;
  ASSERT_TRUE(broker.start());
  // A fresh process rather than fork(): Paho and the sanitizers keep threads that a forked
  // child would not have.
  auto self = std::filesystem::read_symlink("/proc/self/exe").string();
  ::setenv("VIGIL_TEST_MQTT_WILL_URL", broker.url().c_str(), 1);
  // A sharded run (scripts/test-sanitizers.sh) must not shard the helper's one test away.
  ::unsetenv("GTEST_TOTAL_SHARDS");
  ::unsetenv("GTEST_SHARD_INDEX");
  testing::ChildProcess helper({self, "--gtest_also_run_disabled_tests",
                                "--gtest_filter=MqttClientBroker.DISABLED_WillHelper"},
                               broker.dir() / "helper.log");
  ::unsetenv("VIGIL_TEST_MQTT_WILL_URL");
  ASSERT_TRUE(helper.started());
  ASSERT_TRUE(helper.waitForLog("READY")) << helper.log();
  ASSERT_TRUE(retainedBecomes(broker.url(), "vigil/status", "online"));

  ASSERT_TRUE(helper.stop(SIGKILL).status);
  EXPECT_TRUE(retainedBecomes(broker.url(), "vigil/status", "offline")) << broker.log();
}

TEST(MqttClientBroker, BrokerRestartDeliversBufferedInOrderAndFiresOnConnected) {
  VIGIL_REQUIRE_MOSQUITTO();
  // Persistence keeps the subscriber's session over the restart, so the broker queues what
  // arrives before the subscriber is back, whichever reconnects first.
  MosquittoBroker broker(MosquittoBroker::Options{.persistence = true});
  ASSERT_TRUE(broker.start());
  Subscriber::Options persistent{.clientId = "sub-persistent", .cleanSession = false};
  auto subscriber = std::make_unique<Subscriber>(broker.url(), "vigil/#", persistent);
  ASSERT_TRUE(subscriber->connect());

  MqttClient client(settingsFor(broker, "vigil-restart"));
  std::atomic<int> connects{0};
  // What the daemon does: republish its state on every (re)connect.
  client.setOnConnected([&] {
    connects++;
    client.publish("vigil/status", "online", true);
  });
  client.start();
  ASSERT_TRUE(waitUntil([&] { return client.connected() && client.published() == 1; }));
  client.publish("vigil/event", "0", false);
  ASSERT_TRUE(subscriber->waitForCount(2));
  ASSERT_TRUE(waitUntil([&] { return client.published() == 2; }));

  broker.stop();
  ASSERT_TRUE(waitUntil([&] { return !client.connected(); })) << "connection loss not noticed";
  EXPECT_NE(client.lastError().find("connection lost"), std::string::npos) << client.lastError();
  for (int i = 1; i <= 5; ++i) client.publish("vigil/event", std::to_string(i), false);
  EXPECT_EQ(client.bufferedNow(), 5u);
  EXPECT_EQ(client.dropped(), 0u);

  ASSERT_TRUE(broker.restart());
  subscriber = std::make_unique<Subscriber>(broker.url(), "vigil/#", persistent);
  ASSERT_TRUE(subscriber->connect());
  ASSERT_TRUE(waitUntil([&] { return connects.load() == 2; })) << broker.log();
  ASSERT_TRUE(waitUntil([&] { return client.bufferedNow() == 0; }));
  ASSERT_TRUE(subscriber->waitFor([](const auto& r) {
    return std::ranges::count(payloadsOn(r, "vigil/event"), "5") > 0;
  })) << broker.log();
  auto events = payloadsOn(subscriber->received(), "vigil/event");
  // "0" may come again: the broker resends it if the subscriber's own acknowledgement was
  // not saved before the restart (QoS 1 between broker and subscriber; not the client's).
  std::erase(events, "0");
  EXPECT_EQ(firstArrivals(events), (std::vector<std::string>{"1", "2", "3", "4", "5"}));
  EXPECT_LE(events.size(), 5u + 10u) << "more duplicates than one resent window";
  EXPECT_GE(client.reconnects(), 1u);
  EXPECT_TRUE(retainedBecomes(broker.url(), "vigil/status", "online"));
}

TEST(MqttClientBroker, OverflowWhileBrokerDownDropsOldestAndCounts) {
  VIGIL_REQUIRE_MOSQUITTO();
  MosquittoBroker broker(MosquittoBroker::Options{.persistence = true});
  ASSERT_TRUE(broker.start());
  Subscriber::Options persistent{.clientId = "sub-overflow", .cleanSession = false};
  auto subscriber = std::make_unique<Subscriber>(broker.url(), "vigil/#", persistent);
  ASSERT_TRUE(subscriber->connect());

  auto settings = settingsFor(broker, "vigil-overflow");
  settings.bufferMessages = 3;
  MqttClient client(settings);
  client.start();
  ASSERT_TRUE(waitUntil([&] { return client.connected(); }));
  broker.stop();
  ASSERT_TRUE(waitUntil([&] { return !client.connected(); }));
  for (int i = 1; i <= 5; ++i) client.publish("vigil/event", std::to_string(i), false);
  EXPECT_EQ(client.dropped(), 2u);
  EXPECT_EQ(client.bufferedNow(), 3u);
  // What /metrics shows of it (mqtt_figures): the same counts, by their names there.
  FigureList figures;
  reportMqttFigures(client, figures);
  EXPECT_EQ(figures.countOf("dropped"), 2u);
  EXPECT_EQ(figures.countOf("reconnects"), client.reconnects());
  for (const FigureList::Figure& f : figures.figures()) {
    if (f.name->metric == "vigil_mqtt_buffered_messages") {
      EXPECT_EQ(std::get<double>(f.value), 3);
    } else if (f.name->metric == "vigil_mqtt_connected") {
      EXPECT_EQ(std::get<double>(f.value), 0);
    }
  }

  ASSERT_TRUE(broker.restart());
  subscriber = std::make_unique<Subscriber>(broker.url(), "vigil/#", persistent);
  ASSERT_TRUE(subscriber->connect());
  ASSERT_TRUE(waitUntil([&] { return client.connected() && client.bufferedNow() == 0; }));
  ASSERT_TRUE(subscriber->waitFor([](const auto& r) {
    return std::ranges::count(payloadsOn(r, "vigil/event"), "5") > 0;
  })) << broker.log();
  auto events = payloadsOn(subscriber->received(), "vigil/event");
  EXPECT_EQ(firstArrivals(events), (std::vector<std::string>{"3", "4", "5"}));
  EXPECT_EQ(client.dropped(), 2u);
}

TEST(MqttClientBroker, UsernameAndPasswordAccepted) {
  VIGIL_REQUIRE_MOSQUITTO();
  MosquittoBroker broker(MosquittoBroker::Options{.username = "vigil", .password = "s3cret"});
  ASSERT_TRUE(broker.start());
  Subscriber subscriber(broker.url(), "vigil/#", {.username = "vigil", .password = "s3cret"});
  ASSERT_TRUE(subscriber.connect());

  auto settings = settingsFor(broker, "vigil-auth");
  settings.username = "vigil";
  settings.password = "s3cret";
  MqttClient client(settings);
  client.start();
  client.publish("vigil/event", "hello", false);
  ASSERT_TRUE(subscriber.waitForCount(1)) << client.lastError();
  EXPECT_EQ(subscriber.received()[0].payload, "hello");
  EXPECT_TRUE(client.connected());
}

TEST(MqttClientBroker, WrongPasswordIsNotAuthorizedAndKeepsRetrying) {
  VIGIL_REQUIRE_MOSQUITTO();
  MosquittoBroker broker(MosquittoBroker::Options{.username = "vigil", .password = "s3cret"});
  ASSERT_TRUE(broker.start());
  auto settings = settingsFor(broker, "vigil-badauth");
  settings.username = "vigil";
  settings.password = "wrong-password";
  MqttClient client(settings);
  client.start();
  ASSERT_TRUE(waitUntil([&] { return client.reconnects() >= 2; })) << client.lastError();
  EXPECT_FALSE(client.connected());
  EXPECT_NE(client.lastError().find("not authorized"), std::string::npos) << client.lastError();
  EXPECT_EQ(client.lastError().find("wrong-password"), std::string::npos);
  client.publish("vigil/event", "kept", false);
  EXPECT_EQ(client.bufferedNow(), 1u);
}

TEST(MqttClientBroker, TlsWithGeneratedCa) {
  VIGIL_REQUIRE_MOSQUITTO();
  MosquittoBroker broker(MosquittoBroker::Options{.tls = true});
  ASSERT_TRUE(broker.start());
  ASSERT_TRUE(broker.url().starts_with("mqtts://"));
  Subscriber subscriber(broker.url(), "vigil/#", {.caFile = broker.pki().caFile()});
  ASSERT_TRUE(subscriber.connect());

  auto settings = settingsFor(broker, "vigil-tls");
  settings.caFile = broker.pki().caFile();
  ASSERT_TRUE(validateMqttSettings(settings));
  MqttClient client(settings);
  client.start();
  client.publish("vigil/event", "over-tls", false);
  ASSERT_TRUE(subscriber.waitForCount(1)) << client.lastError() << "\n" << broker.log();
  EXPECT_EQ(subscriber.received()[0].payload, "over-tls");
}

TEST(MqttClientBroker, TlsWithWrongCaFailsClearly) {
  VIGIL_REQUIRE_MOSQUITTO();
  MosquittoBroker broker(MosquittoBroker::Options{.tls = true});
  ASSERT_TRUE(broker.start());
  TempDir otherDir;
  testing::TestPki other(otherDir.path(), "unrelated");
  ASSERT_TRUE(other.generate());

  auto settings = settingsFor(broker, "vigil-badca");
  settings.caFile = other.caFile();
  MqttClient client(settings);
  client.start();
  ASSERT_TRUE(waitUntil([&] { return client.reconnects() >= 1 && !client.lastError().empty(); }));
  EXPECT_FALSE(client.connected());
  EXPECT_NE(client.lastError().find("TLS handshake failed"), std::string::npos)
      << client.lastError();
  std::cerr << "wrong CA reports: " << client.lastError() << "\n";
}

TEST(MqttClientBroker, TlsClientCertificateRequired) {
  VIGIL_REQUIRE_MOSQUITTO();
  MosquittoBroker broker(MosquittoBroker::Options{.tls = true, .requireClientCert = true});
  ASSERT_TRUE(broker.start());

  auto settings = settingsFor(broker, "vigil-clientcert");
  settings.caFile = broker.pki().caFile();
  settings.certFile = broker.pki().clientCert();
  settings.keyFile = broker.pki().clientKey();
  MqttClient client(settings);
  client.start();
  client.publish("vigil/event", "with-cert", false);
  EXPECT_TRUE(waitUntil([&] { return client.published() == 1; })) << client.lastError();

  auto noCert = settingsFor(broker, "vigil-nocert");
  noCert.caFile = broker.pki().caFile();
  MqttClient refused(noCert);
  refused.start();
  refused.publish("vigil/event", "without-cert", false);
  ASSERT_TRUE(waitUntil([&] { return refused.reconnects() >= 1; }));
  EXPECT_FALSE(refused.connected());
  // The only difference from the client above is the certificate it does not send.
  EXPECT_EQ(refused.published(), 0U) << "nothing got through";
  EXPECT_NE(refused.lastError().find("TLS handshake failed"), std::string::npos)
      << refused.lastError();
}

}  // namespace
}  // namespace vigil
