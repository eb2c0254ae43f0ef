#pragma once

#include <string>

#include "daemon/events/ha_discovery.h"
#include "daemon/events/message_sink.h"
#include "daemon/events/published_camera.h"

namespace vigil {

// The publisher's entities in Home Assistant (ha_discovery.h says the messages): the node's and
// each camera's retained discovery configs, published when announced and removed (an empty
// retained payload) when a camera, its zones or its lines go. With `enabled` false (the
// configuration's ha_discovery off) it sends nothing. `snapshots`: cameras have a snapshot
// image entity. Messages go to `sink` (nullptr: none).
// Threads: the control thread.
class HaEntities {
 public:
  HaEntities(DiscoverySettings settings, bool enabled, bool snapshots, MessageSink* sink);

  // The node's config (the device and its status attributes).
  void announceNode();
  void announce(const PublishedCamera& camera);
  void remove(const PublishedCamera& camera);
  // Where Home Assistant says it is online (its birth message): <ha_prefix>/status.
  std::string statusTopic() const { return settings_.haPrefix + "/status"; }

 private:
  void send(std::string topic, std::string payload);

  DiscoverySettings settings_;
  bool enabled_;
  bool snapshots_;
  MessageSink* sink_;
};

}  // namespace vigil
