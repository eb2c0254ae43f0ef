#include "daemon/events/ha_discovery.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

namespace vigil {

std::string personTopic(const std::string& prefix, const std::string& camera,
                        const std::string& zone) {
  return zone.empty() ? fmt::format("{}/{}/person", prefix, camera)
                      : fmt::format("{}/{}/{}/person", prefix, camera, zone);
}

std::string countTopic(const std::string& prefix, const std::string& camera,
                       const std::string& zone) {
  return personTopic(prefix, camera, zone) + "/count";
}

std::string snapshotTopic(const std::string& prefix, const std::string& camera) {
  return personTopic(prefix, camera, "") + "/snapshot";
}

std::string statusTopic(const std::string& prefix) { return prefix + "/status"; }

std::string cameraStatusTopic(const std::string& prefix, const std::string& camera) {
  return prefix + "/" + camera + "/status";
}

std::string statusAttributesTopic(const std::string& prefix) {
  return statusTopic(prefix) + "/attributes";
}

std::string eventsTopic(const std::string& prefix) { return prefix + "/events"; }

std::string zoneEventsTopic(const std::string& prefix) { return prefix + "/zone_events"; }

std::string loiteringTopic(const std::string& prefix, const std::string& camera,
                           const std::string& zone) {
  return fmt::format("{}/{}/{}/loitering", prefix, camera, zone);
}

std::string lineCountTopic(const std::string& prefix, const std::string& camera,
                           const std::string& line, std::string_view direction) {
  return fmt::format("{}/{}/{}/{}", prefix, camera, line, direction);
}

std::string lineEventsTopic(const std::string& prefix) { return prefix + "/line_events"; }

namespace {

enum class Entity { kOccupancy, kCount, kSnapshot, kLoitering, kLineCount };

// The entities of one camera or zone, in the order they are announced.
struct EntityRef {
  Entity kind;
  std::string zone;            // empty: the whole camera; kLineCount: the line
  std::string direction = {};  // kLineCount: in or out
  std::string label = {};      // kLineCount: the direction's name
};

// `every`: also the optional ones the camera does not offer (to remove them).
std::vector<EntityRef> entitiesOf(const DiscoveredCamera& camera, bool every) {
  std::vector<EntityRef> refs = {{Entity::kOccupancy, ""}, {Entity::kCount, ""}};
  if (every || camera.snapshot) refs.push_back({Entity::kSnapshot, ""});
  for (const std::string& zone : camera.zones) {
    refs.push_back({Entity::kOccupancy, zone});
    refs.push_back({Entity::kCount, zone});
    if (every || std::find(camera.loiterZones.begin(), camera.loiterZones.end(), zone) !=
                     camera.loiterZones.end()) {
      refs.push_back({Entity::kLoitering, zone});
    }
  }
  for (const DiscoveredLine& line : camera.lines) {
    refs.push_back({Entity::kLineCount, line.name, "in", line.inName});
    refs.push_back({Entity::kLineCount, line.name, "out", line.outName});
  }
  return refs;
}

std::string objectId(const DiscoveredCamera& camera, const EntityRef& ref) {
  std::string base = ref.zone.empty() ? camera.name : camera.name + "_" + ref.zone;
  switch (ref.kind) {
    case Entity::kOccupancy:
      return base + "_person";
    case Entity::kCount:
      return base + "_person_count";
    case Entity::kSnapshot:
      return base + "_snapshot";
    case Entity::kLoitering:
      return base + "_loitering";
    case Entity::kLineCount:
      return base + "_" + ref.direction;
  }
  return base;
}

std::string componentOf(Entity kind) {
  switch (kind) {
    case Entity::kOccupancy:
    case Entity::kLoitering:
      return "binary_sensor";
    case Entity::kCount:
    case Entity::kLineCount:
      return "sensor";
    case Entity::kSnapshot:
      return "image";
  }
  return "sensor";
}

std::string configTopic(const DiscoverySettings& s, const DiscoveredCamera& camera,
                        const EntityRef& ref) {
  // <discovery_prefix>/<component>/<node_id>/<object_id>/config
  return fmt::format("{}/{}/{}/{}/config", s.haPrefix, componentOf(ref.kind), s.instance,
                     objectId(camera, ref));
}

std::string nodeDeviceId(const DiscoverySettings& s) { return "vigil_" + s.instance; }

// What every entity of a camera says: its id, availability, attributes, device and origin.
nlohmann::json commonPayload(const DiscoverySettings& s, const DiscoveredCamera& camera,
                             const EntityRef& ref) {
  return {
      {"unique_id", s.instance + "_" + objectId(camera, ref)},
      // Available while Vigil runs *and* the camera delivers frames: an unplugged camera's
      // entities turn unavailable in Home Assistant instead of showing a stale OFF.
      {"availability",
       nlohmann::json::array({{{"topic", statusTopic(s.topicPrefix)},
                               {"payload_available", "online"},
                               {"payload_not_available", "offline"}},
                              {{"topic", cameraStatusTopic(s.topicPrefix, camera.name)},
                               {"payload_available", "online"},
                               {"payload_not_available", "offline"}}})},
      {"availability_mode", "all"},
      {"json_attributes_topic", statusAttributesTopic(s.topicPrefix)},
      {"qos", s.qos},
      {"device",
       {{"identifiers", nlohmann::json::array({nodeDeviceId(s) + "_" + camera.name})},
        {"name", camera.name},
        {"manufacturer", "Vigil"},
        {"model", "Camera"},
        {"via_device", nodeDeviceId(s)}}},
      {"origin", {{"name", "Vigil"}, {"sw_version", s.version}}},
  };
}

// The entity's own part: its name, topics and class, by kind.
void describeEntity(nlohmann::json& p, const DiscoverySettings& s, const DiscoveredCamera& camera,
                    const EntityRef& ref) {
  // Named within the camera's device: Home Assistant shows "<camera> person".
  const std::string zonePart = ref.zone.empty() ? "" : ref.zone + " ";
  switch (ref.kind) {
    case Entity::kOccupancy:
      p["name"] = zonePart + "person";
      p["device_class"] = "occupancy";
      p["state_topic"] = personTopic(s.topicPrefix, camera.name, ref.zone);
      p["payload_on"] = "ON";
      p["payload_off"] = "OFF";
      break;
    case Entity::kCount:
      p["name"] = zonePart + "person count";
      p["state_topic"] = countTopic(s.topicPrefix, camera.name, ref.zone);
      p["state_class"] = "measurement";
      p["icon"] = "mdi:account-multiple";
      break;
    case Entity::kSnapshot:
      p["name"] = "person snapshot";
      p["image_topic"] = snapshotTopic(s.topicPrefix, camera.name);
      p["content_type"] = "image/jpeg";
      break;
    case Entity::kLoitering:
      p["name"] = zonePart + "loitering";
      p["state_topic"] = loiteringTopic(s.topicPrefix, camera.name, ref.zone);
      p["payload_on"] = "ON";
      p["payload_off"] = "OFF";
      p["icon"] = "mdi:account-clock";
      break;
    case Entity::kLineCount:
      // "door enter": the line and the direction's name.
      p["name"] = ref.zone + " " + ref.label;
      p["state_topic"] = lineCountTopic(s.topicPrefix, camera.name, ref.zone, ref.direction);
      p["state_class"] = "total_increasing";
      p["icon"] = ref.direction == "in" ? "mdi:location-enter" : "mdi:location-exit";
      break;
  }
}

nlohmann::json payloadOf(const DiscoverySettings& s, const DiscoveredCamera& camera,
                         const EntityRef& ref) {
  nlohmann::json p = commonPayload(s, camera, ref);
  describeEntity(p, s, camera, ref);
  return p;
}

}  // namespace

DiscoveryMessage nodeDiscoveryMessage(const DiscoverySettings& s) {
  nlohmann::json device = {{"identifiers", nlohmann::json::array({nodeDeviceId(s)})},
                           {"name", "Vigil " + s.instance},
                           {"manufacturer", "Vigil"},
                           {"model", "Person detector"},
                           {"sw_version", s.version}};
  if (!s.configurationUrl.empty()) device["configuration_url"] = s.configurationUrl;
  nlohmann::json p = {
      {"unique_id", s.instance + "_status"},
      {"name", "status"},
      {"device_class", "connectivity"},
      {"entity_category", "diagnostic"},
      {"state_topic", statusTopic(s.topicPrefix)},
      {"payload_on", "online"},
      {"payload_off", "offline"},
      {"json_attributes_topic", statusAttributesTopic(s.topicPrefix)},
      {"qos", s.qos},
      {"device", device},
      {"origin", {{"name", "Vigil"}, {"sw_version", s.version}}},
  };
  return {fmt::format("{}/binary_sensor/{}/status/config", s.haPrefix, s.instance), p.dump()};
}

std::vector<DiscoveryMessage> discoveryMessages(const DiscoverySettings& settings,
                                                const DiscoveredCamera& camera) {
  std::vector<DiscoveryMessage> out;
  for (const EntityRef& ref : entitiesOf(camera, false)) {
    out.push_back({configTopic(settings, camera, ref), payloadOf(settings, camera, ref).dump()});
  }
  return out;
}

std::vector<DiscoveryMessage> discoveryRemovals(const DiscoverySettings& settings,
                                                const DiscoveredCamera& camera) {
  std::vector<DiscoveryMessage> out;
  for (const EntityRef& ref : entitiesOf(camera, true)) {
    out.push_back({configTopic(settings, camera, ref), ""});
  }
  return out;
}

}  // namespace vigil
