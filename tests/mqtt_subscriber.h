#pragma once

#include <gtest/gtest.h>
#include <mqtt/async_client.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

// A test's own MQTT subscriber (Paho, independent of Vigil's client) and helpers to wait for
// what arrives. Tests that use it link PahoMqttCpp::paho-mqttpp3.
namespace vigil::testing {

using namespace std::chrono_literals;

inline constexpr auto kWait = 10s;  // generous: the machine is shared and may be slow

inline bool waitUntil(const std::function<bool()>& condition,
                      std::chrono::milliseconds limit = kWait) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return condition();
}

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
    if (options_.clientId.empty()) options_.clientId = "sub-" + std::to_string(++counter);
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
      builder.clean_session(options_.cleanSession).connect_timeout(5s);
      if (!options_.username.empty()) {
        builder.user_name(options_.username).password(options_.password);
      }
      if (!options_.caFile.empty()) {
        builder.ssl(mqtt::ssl_options_builder().trust_store(options_.caFile).finalize());
      }
      client_->start_consuming();
      client_->connect(builder.finalize())->wait_for(kWait);
      client_->subscribe(filter_, 1)->wait_for(kWait);
      return ::testing::AssertionSuccess();
    } catch (const mqtt::exception& e) {
      return ::testing::AssertionFailure() << "subscriber cannot connect: " << e.what();
    }
  }

  // Collects messages until `done(received)` holds or the limit passes.
  bool waitFor(const std::function<bool(const std::vector<Received>&)>& done,
               std::chrono::milliseconds limit = kWait) {
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

  bool waitForCount(std::size_t count, std::chrono::milliseconds limit = kWait) {
    return waitFor([count](const auto& r) { return r.size() >= count; }, limit);
  }

  // Drains for `quiet` and returns everything received.
  const std::vector<Received>& drain(std::chrono::milliseconds quiet) {
    waitFor([](const auto&) { return false; }, quiet);
    return received_;
  }

  const std::vector<Received>& received() const { return received_; }

  // Publishes from this client (e.g. Home Assistant's birth message), waiting for the broker.
  ::testing::AssertionResult publish(const std::string& topic, const std::string& payload,
                                     bool retained) {
    try {
      client_->publish(topic, payload.data(), payload.size(), 1, retained)->wait_for(kWait);
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

// The retained payload a fresh subscription to `topic` gets, if any within `limit`.
inline std::optional<std::string> retainedOn(const std::string& url, const std::string& topic,
                                             Subscriber::Options options = {},
                                             std::chrono::milliseconds limit = 2s) {
  Subscriber subscriber(url, topic, options);
  if (!subscriber.connect()) return std::nullopt;
  if (!subscriber.waitFor([](const auto& r) { return !r.empty(); }, limit)) return std::nullopt;
  const auto& first = subscriber.received().front();
  if (!first.retained) return std::nullopt;
  return first.payload;
}

// Polls fresh subscriptions until the retained payload on `topic` is `expected`.
inline bool retainedBecomes(const std::string& url, const std::string& topic,
                            const std::string& expected, Subscriber::Options options = {}) {
  return waitUntil([&] { return retainedOn(url, topic, options, 500ms) == expected; });
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
