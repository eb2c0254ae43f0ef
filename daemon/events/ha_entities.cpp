#include "daemon/events/ha_entities.h"

#include "daemon/events/camera_topics.h"

namespace vigil {

HaEntities::HaEntities(DiscoverySettings settings, bool enabled, bool snapshots, MessageSink* sink)
    : settings_(std::move(settings)), enabled_(enabled), snapshots_(snapshots), sink_(sink) {}

void HaEntities::send(std::string topic, std::string payload) {
  if (sink_ != nullptr) sink_->publish(std::move(topic), std::move(payload), true);
}

void HaEntities::announceNode() {
  if (!enabled_) return;
  DiscoveryMessage node = nodeDiscoveryMessage(settings_);
  send(std::move(node.topic), std::move(node.payload));
}

void HaEntities::announce(const PublishedCamera& camera) {
  if (!enabled_) return;
  for (auto& m : discoveryMessages(settings_, discoveredCamera(camera, snapshots_))) {
    send(std::move(m.topic), std::move(m.payload));
  }
}

void HaEntities::remove(const PublishedCamera& camera) {
  if (!enabled_) return;
  for (auto& m : discoveryRemovals(settings_, discoveredCamera(camera, snapshots_))) {
    send(std::move(m.topic), "");
  }
}

}  // namespace vigil
