#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vigil {

// Home Assistant MQTT discovery (https://www.home-assistant.io/integrations/mqtt/#mqtt-discovery):
// the retained config messages that make Vigil's topics appear as entities of one device.
struct DiscoverySettings {
  std::string haPrefix = "homeassistant";
  std::string topicPrefix = "vigil";  // where Vigil's own topics live
  std::string instance = "vigil";     // the node (Config::node); names the device, [a-z0-9_-]
  std::string version;                // sw_version of the device
  int qos = 1;
  std::string configurationUrl;  // the status page as Home Assistant can reach it; empty: none
};

// What one camera offers: its zones (each a binary sensor and a count sensor like the camera's
// own), the zones that say loitering (a binary sensor each), and whether a snapshot image
// entity exists.
// A counting line: a total_increasing count sensor per direction, named by the direction's name.
struct DiscoveredLine {
  std::string name;
  std::string inName = "in";
  std::string outName = "out";
};

struct DiscoveredCamera {
  std::string name;
  std::vector<std::string> zones;
  bool snapshot = false;
  std::vector<std::string> loiterZones;
  std::vector<DiscoveredLine> lines;
};

struct DiscoveryMessage {
  std::string topic;
  std::string payload;  // JSON; empty removes the entity (Home Assistant deletes it)
};

// Topics of Vigil's state, shared by the discovery payloads and the publisher.
std::string personTopic(const std::string& prefix, const std::string& camera,
                        const std::string& zone);  // zone empty: the whole camera
std::string countTopic(const std::string& prefix, const std::string& camera,
                       const std::string& zone);
std::string snapshotTopic(const std::string& prefix, const std::string& camera);
std::string statusTopic(const std::string& prefix);
// <prefix>/<camera>/status: online while the camera delivers frames, offline while it is lost.
std::string cameraStatusTopic(const std::string& prefix, const std::string& camera);
// The daemon's status attributes (JSON), every entity's json_attributes_topic.
std::string statusAttributesTopic(const std::string& prefix);
std::string eventsTopic(const std::string& prefix);
// Tracking's zone events (enter, leave, loiter), not retained.
std::string zoneEventsTopic(const std::string& prefix);
// <prefix>/<camera>/<zone>/loitering: retained ON while a tracked person who loitered is in the
// zone.
std::string loiteringTopic(const std::string& prefix, const std::string& camera,
                           const std::string& zone);

// <prefix>/<camera>/<line>/<direction> (direction `in` or `out`): retained running count.
std::string lineCountTopic(const std::string& prefix, const std::string& camera,
                           const std::string& line, std::string_view direction);
// Crossings of counting lines, not retained.
std::string lineEventsTopic(const std::string& prefix);

// The node's own device ("Vigil <node>", with the status page as its configuration_url) and
// its one entity: a connectivity binary_sensor on <topicPrefix>/status, with the backend in
// its attributes.
DiscoveryMessage nodeDiscoveryMessage(const DiscoverySettings& settings);

// Per camera: an occupancy binary_sensor and a count sensor, the same per zone, a loitering
// binary_sensor per zone with loiter_after, an image entity when snapshots are on, and per
// counting line and direction a count sensor (state_class total_increasing, so that Home
// Assistant's statistics and utility meters give daily counts). They
// belong to the camera's own device (named after the camera, connected via the node's device,
// so that each camera can go in its own area), are available while both <topicPrefix>/status
// and <topicPrefix>/<camera>/status say online, and take attributes (the backend in use, its
// last fallback) from <topicPrefix>/status/attributes.
std::vector<DiscoveryMessage> discoveryMessages(const DiscoverySettings& settings,
                                                const DiscoveredCamera& camera);

// Empty payloads for every entity discoveryMessages() could have announced for `camera`:
// publishing them (retained) removes the entities after a camera or zone is removed.
std::vector<DiscoveryMessage> discoveryRemovals(const DiscoverySettings& settings,
                                                const DiscoveredCamera& camera);

}  // namespace vigil
