#include "daemon/events/availability_messages.h"

#include "daemon/events/ha_discovery.h"

namespace vigil {

AvailabilityMessages::AvailabilityMessages(std::string topicPrefix, MessageSink* sink)
    : prefix_(std::move(topicPrefix)), sink_(sink) {}

void AvailabilityMessages::send(std::string topic, std::string payload) {
  if (sink_ != nullptr) sink_->publish(std::move(topic), std::move(payload), true);
}

std::string AvailabilityMessages::statusTopic() const { return vigil::statusTopic(prefix_); }

void AvailabilityMessages::announce() {
  send(statusTopic(), "online");
  if (!attributes_.empty()) send(statusAttributesTopic(prefix_), attributes_);
}

void AvailabilityMessages::announceCamera(const std::string& camera) {
  auto it = available_.find(camera);
  if (it != available_.end())
    send(cameraStatusTopic(prefix_, camera), it->second ? "online" : "offline");
}

void AvailabilityMessages::setAttributes(std::string json, bool announced) {
  if (json == attributes_) return;
  attributes_ = std::move(json);
  if (announced) send(statusAttributesTopic(prefix_), attributes_);
}

void AvailabilityMessages::setCameraAvailable(const std::string& camera, bool available,
                                              bool announced) {
  auto [it, added] = available_.try_emplace(camera, available);
  if (!added && it->second == available) return;
  it->second = available;
  if (announced) send(cameraStatusTopic(prefix_, camera), available ? "online" : "offline");
}

void AvailabilityMessages::forget(std::string_view camera) {
  if (auto it = available_.find(camera); it != available_.end()) available_.erase(it);
}

}  // namespace vigil
