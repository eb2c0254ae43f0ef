#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "daemon/base/error.h"
#include "daemon/events/message_sink.h"
#include "daemon/mqtt/connection_problem.h"
#include "daemon/mqtt/delivery_window.h"
#include "daemon/mqtt/mqtt_settings.h"
#include "daemon/mqtt/mqtt_subscriptions.h"
#include "daemon/mqtt/reconnect_backoff.h"

namespace mqtt {
class async_client;
class connect_options;
}  // namespace mqtt

namespace vigil {

// The daemon's MQTT connection (Paho C++ async_client underneath).
//
// Threads: publish() and the getters may be called from any thread (the daemon calls them
// from its io_context thread); they never block on the network, only on a short internal
// mutex. The client owns one internal thread that connects, reconnects with exponential
// backoff (minRetry doubling up to maxRetry) and hands queued messages to Paho in order.
// Paho's own threads deliver acknowledgements and connection-lost notices. All three share one
// mutex and one condition variable: the mutex guards the delivery window (DeliveryWindow, which
// borrows both, and the connected flag, to take and wake them itself), the reconnect backoff
// (ReconnectBackoff), the connection problem, the start/stop flags and the on-connected
// callback; the connected flag and the counters are atomics, read without it.
//
// Delivery: every message goes through one bounded queue of bufferMessages entries and is
// removed only once Paho reports it delivered (QoS 1/2: acknowledged by the broker). After a
// reconnect the unacknowledged messages are sent again from the front, in order, before any
// newer ones, so a message may arrive twice (QoS 1 "at least once") but never out of order.
// Paho's own offline buffering is off: it neither bounds nor counts what it drops.
// When the queue is full, the oldest non-retained message not yet handed to Paho is dropped
// and counted in dropped(). A retained message replaces a queued, not yet sent retained
// message on the same topic (a broker would keep only the newest anyway; not a drop).
//
// Errors: nothing throws out of this class. Connection failures are logged (logger "mqtt")
// once per change of state or reason, with the URL but never the password; lastError()
// holds the latest reason.
class MqttClient : public MessageSink {
 public:
  explicit MqttClient(MqttSettings settings);
  // stop("", "") if still running: no final message, clean disconnect. Takes about 1 s when
  // it is the process's last Paho client (Paho joins its internal threads).
  ~MqttClient() override;
  MqttClient(const MqttClient&) = delete;
  MqttClient& operator=(const MqttClient&) = delete;

  // Starts connecting in the background and returns at once. The last will, if willTopic is
  // set, is willPayload, retained, at settings.qos. Calling start() twice does nothing.
  void start();

  // Publishes finalTopic/finalPayload retained (e.g. status "offline") after what is already
  // queued, if connected, waits up to 1 s for it, then disconnects cleanly (so the broker does
  // not send the last will), waiting up to 0.5 s. An empty finalTopic skips the final message.
  // Blocks up to ~1.5 s even when the broker answers nothing (the daemon's stop promise is
  // 2 s); call it from the thread that owns the client, not from a callback.
  void stop(std::string_view finalTopic, std::string_view finalPayload);

  // Queues a message; see "Delivery" above. Never blocks on the network.
  void publish(std::string topic, std::string payload, bool retained) override {
    window_.publish(std::move(topic), std::move(payload), retained);
  }

  // Subscribes to `topicFilter` (at settings.qos) on every connect; messages arrive at the
  // handler set with setOnMessage(), from a Paho thread (post to your own executor). Call both
  // before start().
  void subscribe(std::string topicFilter);
  void setOnMessage(std::function<void(std::string topic, std::string payload)> handler);

  // Called after every successful connect and reconnect, from the client's internal thread
  // (not the caller's): post to your own executor (asio::post) before touching your state.
  // Messages published from it are queued after the ones buffered while disconnected.
  // Set it before start().
  void setOnConnected(std::function<void()> callback);

  bool connected() const { return connected_.load(); }
  std::uint64_t published() const { return window_.published(); }     // delivered (acked) messages
  std::uint64_t dropped() const { return window_.dropped(); }         // lost to a full buffer
  std::size_t bufferedNow() const { return window_.bufferedNow(); }   // queued, not yet acked
  std::uint64_t reconnects() const { return backoff_.reconnects(); }  // attempts after the first
  std::string lastError() const;

 private:
  void run();
  void attemptConnect();
  // A stop was asked for (stop() disconnects, which cancels what a token waits for).
  bool stopRequested() const;
  void sendWindow(std::unique_lock<std::mutex>& lock);
  void onConnectionLost(const std::string& cause);
  void checkAlive(std::unique_lock<std::mutex>& lock);

  MqttSettings settings_;
  std::string serverUri_;  // tcp:// or ssl:// for Paho

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<bool> connected_{false};
  DeliveryWindow window_;  // guarded by mutex_; its Paho listener outlives client_

  std::unique_ptr<mqtt::async_client> client_;
  std::unique_ptr<mqtt::connect_options> connectOptions_;
  std::function<void()> onConnected_;
  MqttSubscriptions subscriptions_;

  bool stopping_ = false;
  bool started_ = false;
  bool stopped_ = false;
  ConnectionProblem problem_;
  ReconnectBackoff backoff_;  // guarded by mutex_
  std::thread worker_;
};

}  // namespace vigil
