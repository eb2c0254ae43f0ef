#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "daemon/mqtt/outgoing_queue.h"

namespace mqtt {
class async_client;
class iaction_listener;
class token;
}  // namespace mqtt

namespace vigil {

// The MQTT client's messages from publish() to the broker's acknowledgement: the one outgoing
// queue (outgoing_queue), the window of at most kMessages of them handed to Paho and not yet
// acknowledged, Paho's per-message results, and what it counts (published, dropped, buffered).
// Threads: guarded by the client's mutex and woken through the client's condition variable, both
// borrowed for the window's life, like the client's connected flag it reads. publish() and
// deliverFinal() take that mutex themselves (any thread; deliverFinal() the owner's), and so do
// Paho's threads reporting a delivery; the other members are called with it held (the client's
// thread), and handOver() releases it while it calls Paho (Paho's threads take their own lock,
// then this one) as resendAfterPause() does while it waits. The counters are atomic, read from any
// thread.
class DeliveryWindow {
 public:
  // Messages handed to Paho and not yet acknowledged. Small: the broker is near, and the
  // window bounds how many may be sent twice after a lost connection.
  static constexpr std::size_t kMessages = 10;

  // `bufferMessages` bounds the queue; messages are made at `qos`.
  DeliveryWindow(std::size_t bufferMessages, int qos, std::mutex& mutex,
                 std::condition_variable& wake, const std::atomic<bool>& connected);
  ~DeliveryWindow();
  DeliveryWindow(const DeliveryWindow&) = delete;
  DeliveryWindow& operator=(const DeliveryWindow&) = delete;

  // Queues a message (a full queue drops one, counted) and wakes the client's thread.
  void publish(std::string topic, std::string payload, bool retained);
  // If connected: publishes finalTopic/finalPayload retained after what is queued, waits up to
  // `limit` for the queue to empty or the connection to drop, and warns when messages are left.
  void deliverFinal(std::string_view finalTopic, std::string_view finalPayload,
                    std::chrono::milliseconds limit);

  // Messages queued and not yet handed to Paho within the window.
  bool hasUnsent() const { return queue_.hasUnsent(kMessages); }
  // Hands them to Paho in order; false when Paho refused one (the rest are not handed over).
  bool handOver(std::unique_lock<std::mutex>& lock, mqtt::async_client& client);
  // A new or lost connection: everything unacknowledged goes again.
  void resendFromFront() { queue_.resendFromFront(); }
  // A failed hand-over: everything unacknowledged goes again after a short pause (woken early
  // by a delivery, a publish or a stop); duplicates are within QoS 1 rules.
  void resendAfterPause(std::unique_lock<std::mutex>& lock);
  bool empty() const { return queue_.empty(); }
  std::size_t size() const { return queue_.size(); }

  std::uint64_t published() const { return published_.load(); }    // delivered (acked) messages
  std::uint64_t dropped() const { return dropped_.load(); }        // lost to a full buffer
  std::size_t bufferedNow() const { return bufferedNow_.load(); }  // queued, not yet acked

 private:
  void onDelivered(const mqtt::token& token, bool success);

  int qos_;
  std::mutex& mutex_;
  std::condition_variable& wake_;
  const std::atomic<bool>& connected_;
  std::unique_ptr<mqtt::iaction_listener> listener_;
  OutgoingQueue queue_;
  std::atomic<std::uint64_t> published_{0};
  std::atomic<std::uint64_t> dropped_{0};
  std::atomic<std::size_t> bufferedNow_{0};
};

}  // namespace vigil
