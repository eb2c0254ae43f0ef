#pragma once

#include <gtest/gtest.h>
#include <mqtt/async_client.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/wait.h"

// A test's own MQTT subscriber (Paho, independent of Vigil's client) and helpers to wait for
// what arrives. Tests that use it link PahoMqttCpp::paho-mqttpp3.
namespace vigil::testing {

// Paho's own calls (connect, subscribe, publish) wait this long for the broker.
inline constexpr auto kBrokerReply = 30s;

struct Received {
  std::string topic;
  std::string payload;
  bool retained;
};

// A second, independent Paho client that subscribes and collects what arrives.
class Subscriber {
 public:
  struct Options {
    std::string username{};
    std::string password{};
    std::string caFile{};
    std::string clientId{};    // empty: a unique one
    bool cleanSession = true;  // false: the broker queues QoS 1 messages while we are away
  };

  Subscriber(std::string url, std::string topicFilter, Options options)
      : url_(std::move(url)), filter_(std::move(topicFilter)), options_(std::move(options)) {
    static std::atomic<int> counter{0};
    if (options_.clientId.empty()) {
      options_.clientId = "sub-" + std::to_string(getpid()) + "-" + std::to_string(++counter);
    }
    std::string uri = url_;
    if (uri.starts_with("mqtts://")) uri = "ssl://" + uri.substr(8);
    if (uri.starts_with("mqtt://")) uri = "tcp://" + uri.substr(7);
    client_ = std::make_unique<mqtt::async_client>(uri, options_.clientId);
  }
  Subscriber(std::string url, std::string topicFilter)
      : Subscriber(std::move(url), std::move(topicFilter), Options{}) {}
  ~Subscriber() {
    try {
      if (client_->is_connected()) client_->disconnect()->wait_for(2s);
    } catch (const mqtt::exception&) {
    }
  }

  ::testing::AssertionResult connect() {
    try {
      mqtt::connect_options_builder builder;
      builder.clean_session(options_.cleanSession).connect_timeout(20s);
      if (!options_.username.empty()) {
        builder.user_name(options_.username).password(options_.password);
      }
      if (!options_.caFile.empty()) {
        builder.ssl(mqtt::ssl_options_builder().trust_store(options_.caFile).finalize());
      }
      client_->start_consuming();
      if (!client_->connect(builder.finalize())->wait_for(kBrokerReply)) {
        return ::testing::AssertionFailure() << "subscriber: no CONNACK from " << url_;
      }
      return subscribe(filter_);
    } catch (const mqtt::exception& e) {
      return ::testing::AssertionFailure() << "subscriber cannot connect: " << e.what();
    }
  }

  // Subscribes to one more topic filter on the connected client.
  ::testing::AssertionResult subscribe(const std::string& filter) {
    try {
      if (!client_->subscribe(filter, 1)->wait_for(kBrokerReply)) {
        return ::testing::AssertionFailure() << "subscriber: no SUBACK for " << filter;
      }
      return ::testing::AssertionSuccess();
    } catch (const mqtt::exception& e) {
      return ::testing::AssertionFailure() << "cannot subscribe to " << filter << ": " << e.what();
    }
  }

  // Collects messages until `done(received)` holds or the limit passes.
  bool waitFor(const std::function<bool(const std::vector<Received>&)>& done,
               std::chrono::milliseconds limit = kDeadline) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done(received_)) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      mqtt::const_message_ptr message;
      if (client_->try_consume_message_for(&message, 100ms) && message) {
        received_.push_back(
            Received{message->get_topic(), message->to_string(), message->is_retained()});
      }
    }
    return true;
  }

  bool waitForCount(std::size_t count, std::chrono::milliseconds limit = kDeadline) {
    return waitFor([count](const auto& r) { return r.size() >= count; }, limit);
  }

  const std::vector<Received>& received() const { return received_; }

  // Publishes from this client (e.g. Home Assistant's birth message), waiting for the broker.
  ::testing::AssertionResult publish(const std::string& topic, const std::string& payload,
                                     bool retained) {
    try {
      if (!client_->publish(topic, payload.data(), payload.size(), 1, retained)
               ->wait_for(kBrokerReply)) {
        return ::testing::AssertionFailure() << "subscriber: no PUBACK for " << topic;
      }
      return ::testing::AssertionSuccess();
    } catch (const mqtt::exception& e) {
      return ::testing::AssertionFailure() << "cannot publish to " << topic << ": " << e.what();
    }
  }

 private:
  std::string url_;
  std::string filter_;
  Options options_;
  std::unique_ptr<mqtt::async_client> client_;
  std::vector<Received> received_;
};

// The payload retained on `topic` at this moment, or nullopt when none is. Decided, not
// guessed from a quiet moment: a fresh subscription to the topic and to a probe topic of its
// own, then a message to the probe. The broker sends a subscription's retained messages before
// anything published after it, so when the probe arrives, whatever is retained has arrived
// too. A broker that does not answer is an empty optional as well (the subscriber's
// assertion says why).
inline std::optional<std::string> retainedNow(const std::string& url, const std::string& topic,
                                              Subscriber::Options options = {}) {
  static std::atomic<int> probes{0};
  const std::string probe =
      "vigil-test-probe/" + std::to_string(getpid()) + "/" + std::to_string(++probes);
  Subscriber subscriber(url, topic, options);
  if (!subscriber.connect() || !subscriber.subscribe(probe)) return std::nullopt;
  if (!subscriber.publish(probe, "probe", false)) return std::nullopt;
  if (!subscriber.waitFor([&](const auto& r) {
        return std::any_of(r.begin(), r.end(), [&](const Received& m) { return m.topic == probe; });
      })) {
    return std::nullopt;
  }
  for (const Received& m : subscriber.received()) {
    if (m.topic == probe) break;
    if (m.topic == topic && m.retained) return m.payload;
  }
  return std::nullopt;
}

// Waits until a payload retained on `topic` satisfies `accept` (any payload by default) and
// returns it; nullopt when none did within `limit`.
inline std::optional<std::string> waitForRetained(
    const std::string& url, const std::string& topic,
    const std::function<bool(const std::string&)>& accept = [](const std::string&) { return true; },
    Subscriber::Options options = {}, std::chrono::milliseconds limit = kDeadline) {
  std::optional<std::string> payload;
  const bool found = waitUntil(
      [&] {
        payload = retainedNow(url, topic, options);
        return payload && accept(*payload);
      },
      limit, 100ms);
  return found ? payload : std::nullopt;
}

// Waits until the payload retained on `topic` is `expected`.
inline bool retainedBecomes(const std::string& url, const std::string& topic,
                            const std::string& expected, Subscriber::Options options = {}) {
  return waitForRetained(
             url, topic, [&](const std::string& p) { return p == expected; }, options)
      .has_value();
}

inline std::vector<std::string> payloadsOn(const std::vector<Received>& received,
                                           const std::string& topic) {
  std::vector<std::string> payloads;
  for (const auto& r : received) {
    if (r.topic == topic) payloads.push_back(r.payload);
  }
  return payloads;
}

// QoS 1 allows a message to arrive twice after a lost connection; order must hold for the
// first arrival of each.
inline std::vector<std::string> firstArrivals(const std::vector<std::string>& payloads) {
  std::vector<std::string> firsts;
  for (const auto& p : payloads) {
    if (std::find(firsts.begin(), firsts.end(), p) == firsts.end()) firsts.push_back(p);
  }
  return firsts;
}

}  // namespace vigil::testing
