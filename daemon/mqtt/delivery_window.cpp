#include "daemon/mqtt/delivery_window.h"

#include <mqtt/async_client.h>

#include <functional>
#include <utility>
#include <vector>

#include "daemon/base/log.h"

namespace vigil {

namespace {

// Forwards Paho's per-message completion to the window.
class DeliveryListener : public mqtt::iaction_listener {
 public:
  explicit DeliveryListener(std::function<void(const mqtt::token&, bool)> done)
      : done_(std::move(done)) {}

 private:
  void on_success(const mqtt::token& token) override { done_(token, true); }
  void on_failure(const mqtt::token& token) override { done_(token, false); }

  std::function<void(const mqtt::token&, bool)> done_;
};

}  // namespace

DeliveryWindow::DeliveryWindow(std::size_t bufferMessages, int qos, std::mutex& mutex,
                               std::condition_variable& wake, const std::atomic<bool>& connected)
    : qos_(qos),
      mutex_(mutex),
      wake_(wake),
      connected_(connected),
      listener_(std::make_unique<DeliveryListener>(
          [this](const mqtt::token& token, bool success) { onDelivered(token, success); })),
      queue_(bufferMessages) {}

DeliveryWindow::~DeliveryWindow() = default;

void DeliveryWindow::publish(std::string topic, std::string payload, bool retained) {
  std::shared_ptr<const mqtt::message> message;
  try {
    message = mqtt::message::create(std::move(topic), std::move(payload), qos_, retained);
  } catch (const mqtt::exception& e) {
    logger("mqtt")->error("cannot create a message: {}", e.what());
    dropped_++;
    return;
  }
  {
    std::lock_guard lock(mutex_);
    if (queue_.push(std::move(message), retained)) dropped_++;
    bufferedNow_ = queue_.size();
  }
  wake_.notify_all();
}

void DeliveryWindow::deliverFinal(std::string_view finalTopic, std::string_view finalPayload,
                                  std::chrono::milliseconds limit) {
  if (!connected_) return;
  publish(std::string(finalTopic), std::string(finalPayload), true);
  std::unique_lock lock(mutex_);
  wake_.wait_for(lock, limit, [this] { return queue_.empty() || !connected_; });
  if (!queue_.empty()) {
    logger("mqtt")->warn("stopping with {} message(s) not delivered (final '{}' included)",
                         queue_.size(), finalTopic);
  }
}

bool DeliveryWindow::handOver(std::unique_lock<std::mutex>& lock, mqtt::async_client& client) {
  const std::vector<OutgoingQueue::Message> batch = queue_.takeWindow(kMessages);
  // Paho is never called with the mutex held: its threads take it in callbacks.
  lock.unlock();
  bool failed = false;
  for (const auto& message : batch) {
    try {
      client.publish(message, nullptr, *listener_);
    } catch (const mqtt::exception& e) {
      logger("mqtt")->debug("publish to {} failed: {}", message->get_topic(), e.what());
      failed = true;
      break;
    }
  }
  lock.lock();
  return !failed;
}

void DeliveryWindow::resendAfterPause(std::unique_lock<std::mutex>& lock) {
  queue_.resendFromFront();
  wake_.wait_for(lock, std::chrono::milliseconds(100));
}

void DeliveryWindow::onDelivered(const mqtt::token& token, bool success) {
  const auto* delivery = dynamic_cast<const mqtt::delivery_token*>(&token);
  if (delivery == nullptr) return;
  auto message = delivery->get_message();
  {
    std::lock_guard lock(mutex_);
    if (success) {
      published_ += queue_.acknowledge(message);
      bufferedNow_ = queue_.size();
    } else if (connected_) {
      queue_.resendFromFront();
    }
  }
  wake_.notify_all();
}

}  // namespace vigil
