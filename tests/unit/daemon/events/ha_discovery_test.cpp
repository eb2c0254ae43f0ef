// Home Assistant's discovery messages (ha_discovery), on their own: the topics of Vigil's state,
// the node's device, a camera's entities in their order with their payloads, and the removals of
// every entity a camera could have announced.
#include "daemon/events/ha_discovery.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace vigil {
namespace {

using nlohmann::json;

DiscoverySettings hallSettings() {
  DiscoverySettings s;
  s.haPrefix = "ha";
  s.topicPrefix = "home/vigil";
  s.instance = "hall";
  s.version = "0.2.0";
  s.qos = 0;
  return s;
}

// "door" with zones porch (loitering) and path, a snapshot, and a line "entrance".
DiscoveredCamera doorWithEverything() {
  return DiscoveredCamera{
      "door", {"porch", "path"}, true, {"porch"}, {{"entrance", "arrive", "leave"}}};
}

std::vector<std::string> topicsOf(const std::vector<DiscoveryMessage>& messages) {
  std::vector<std::string> out;
  for (const auto& m : messages) out.push_back(m.topic);
  return out;
}

const DiscoveryMessage& withTopic(const std::vector<DiscoveryMessage>& messages,
                                  const std::string& topic) {
  for (const auto& m : messages) {
    if (m.topic == topic) return m;
  }
  ADD_FAILURE() << "no message on " << topic;
  static const DiscoveryMessage none;
  return none;
}

TEST(HaDiscoveryTest, TheTopicsOfVigilsStateAreUnderItsPrefix) {
  EXPECT_EQ(personTopic("vigil", "door", ""), "vigil/door/person");
  EXPECT_EQ(personTopic("vigil", "door", "porch"), "vigil/door/porch/person");
  EXPECT_EQ(countTopic("vigil", "door", ""), "vigil/door/person/count");
  EXPECT_EQ(countTopic("vigil", "door", "porch"), "vigil/door/porch/person/count");
  EXPECT_EQ(snapshotTopic("vigil", "door"), "vigil/door/person/snapshot");
  EXPECT_EQ(statusTopic("vigil"), "vigil/status");
  EXPECT_EQ(cameraStatusTopic("vigil", "door"), "vigil/door/status");
  EXPECT_EQ(statusAttributesTopic("vigil"), "vigil/status/attributes");
  EXPECT_EQ(eventsTopic("vigil"), "vigil/events");
  EXPECT_EQ(zoneEventsTopic("vigil"), "vigil/zone_events");
  EXPECT_EQ(loiteringTopic("vigil", "door", "porch"), "vigil/door/porch/loitering");
  EXPECT_EQ(lineCountTopic("vigil", "door", "entrance", "out"), "vigil/door/entrance/out");
  EXPECT_EQ(lineEventsTopic("vigil"), "vigil/line_events");
}

TEST(HaDiscoveryTest, TheNodesDeviceHasOneConnectivitySensorOnTheStatusTopic) {
  DiscoverySettings s = hallSettings();
  const DiscoveryMessage node = nodeDiscoveryMessage(s);
  EXPECT_EQ(node.topic, "ha/binary_sensor/hall/status/config");
  const json p = json::parse(node.payload);
  EXPECT_EQ(p["unique_id"], "hall_status");
  EXPECT_EQ(p["device_class"], "connectivity");
  EXPECT_EQ(p["entity_category"], "diagnostic");
  EXPECT_EQ(p["state_topic"], "home/vigil/status");
  EXPECT_EQ(p["payload_on"], "online");
  EXPECT_EQ(p["payload_off"], "offline");
  EXPECT_EQ(p["json_attributes_topic"], "home/vigil/status/attributes");
  EXPECT_EQ(p["qos"], 0);
  EXPECT_EQ(p["device"]["identifiers"], json::array({"vigil_hall"}));
  EXPECT_EQ(p["device"]["name"], "Vigil hall");
  EXPECT_EQ(p["device"]["sw_version"], "0.2.0");
  EXPECT_FALSE(p["device"].contains("configuration_url")) << "no status page address given";

  s.configurationUrl = "https://hall.local:9842/";
  EXPECT_EQ(json::parse(nodeDiscoveryMessage(s).payload)["device"]["configuration_url"],
            "https://hall.local:9842/");
}

TEST(HaDiscoveryTest, ACamerasEntitiesComeInOrderEachOnItsComponentsTopic) {
  EXPECT_EQ(topicsOf(discoveryMessages(hallSettings(), doorWithEverything())),
            (std::vector<std::string>{
                "ha/binary_sensor/hall/door_person/config",
                "ha/sensor/hall/door_person_count/config",
                "ha/image/hall/door_snapshot/config",
                "ha/binary_sensor/hall/door_porch_person/config",
                "ha/sensor/hall/door_porch_person_count/config",
                "ha/binary_sensor/hall/door_porch_loitering/config",
                "ha/binary_sensor/hall/door_path_person/config",
                "ha/sensor/hall/door_path_person_count/config",
                "ha/sensor/hall/door_entrance_in/config",
                "ha/sensor/hall/door_entrance_out/config",
            }));
}

TEST(HaDiscoveryTest, EveryEntityBelongsToTheCamerasDeviceViaTheNodeAndFollowsBothStatuses) {
  for (const DiscoveryMessage& m : discoveryMessages(hallSettings(), doorWithEverything())) {
    const json p = json::parse(m.payload);
    EXPECT_EQ(p["device"]["identifiers"], json::array({"vigil_hall_door"})) << m.topic;
    EXPECT_EQ(p["device"]["name"], "door") << m.topic;
    EXPECT_EQ(p["device"]["via_device"], "vigil_hall") << m.topic;
    EXPECT_EQ(p["availability_mode"], "all") << m.topic;
    ASSERT_EQ(p["availability"].size(), 2U) << m.topic;
    EXPECT_EQ(p["availability"][0]["topic"], "home/vigil/status") << m.topic;
    EXPECT_EQ(p["availability"][1]["topic"], "home/vigil/door/status") << m.topic;
    EXPECT_EQ(p["json_attributes_topic"], "home/vigil/status/attributes") << m.topic;
    EXPECT_EQ(p["qos"], 0) << m.topic;
    EXPECT_EQ(p["unique_id"].get<std::string>().rfind("hall_door_", 0), 0U) << m.topic;
  }
}

TEST(HaDiscoveryTest, EachKindOfEntitySaysWhereItsStateIs) {
  const auto messages = discoveryMessages(hallSettings(), doorWithEverything());
  const json occupancy =
      json::parse(withTopic(messages, "ha/binary_sensor/hall/door_porch_person/config").payload);
  EXPECT_EQ(occupancy["name"], "porch person");
  EXPECT_EQ(occupancy["device_class"], "occupancy");
  EXPECT_EQ(occupancy["state_topic"], "home/vigil/door/porch/person");
  EXPECT_EQ(occupancy["payload_on"], "ON");

  const json count =
      json::parse(withTopic(messages, "ha/sensor/hall/door_person_count/config").payload);
  EXPECT_EQ(count["name"], "person count");
  EXPECT_EQ(count["state_topic"], "home/vigil/door/person/count");
  EXPECT_EQ(count["state_class"], "measurement");

  const json image = json::parse(withTopic(messages, "ha/image/hall/door_snapshot/config").payload);
  EXPECT_EQ(image["image_topic"], "home/vigil/door/person/snapshot");
  EXPECT_EQ(image["content_type"], "image/jpeg");

  const json loitering =
      json::parse(withTopic(messages, "ha/binary_sensor/hall/door_porch_loitering/config").payload);
  EXPECT_EQ(loitering["name"], "porch loitering");
  EXPECT_EQ(loitering["state_topic"], "home/vigil/door/porch/loitering");

  const json arrive =
      json::parse(withTopic(messages, "ha/sensor/hall/door_entrance_in/config").payload);
  EXPECT_EQ(arrive["name"], "entrance arrive") << "the line and the direction's name";
  EXPECT_EQ(arrive["state_topic"], "home/vigil/door/entrance/in");
  EXPECT_EQ(arrive["state_class"], "total_increasing") << "daily counts in Home Assistant";
  const json leave =
      json::parse(withTopic(messages, "ha/sensor/hall/door_entrance_out/config").payload);
  EXPECT_EQ(leave["name"], "entrance leave");
  EXPECT_EQ(leave["state_topic"], "home/vigil/door/entrance/out");
}

TEST(HaDiscoveryTest, WithoutSnapshotsOrLoiteringThoseEntitiesAreNotAnnounced) {
  const DiscoveredCamera door{"door", {"porch"}, false, {}, {}};
  EXPECT_EQ(topicsOf(discoveryMessages(hallSettings(), door)),
            (std::vector<std::string>{
                "ha/binary_sensor/hall/door_person/config",
                "ha/sensor/hall/door_person_count/config",
                "ha/binary_sensor/hall/door_porch_person/config",
                "ha/sensor/hall/door_porch_person_count/config",
            }));
}

// A camera or zone removed: every entity it could have had goes, its optional ones too (they may
// have been announced before the reload).
TEST(HaDiscoveryTest, RemovalsEmptyEveryEntityTheCameraCouldHaveAnnounced) {
  const DiscoveredCamera door{"door", {"porch"}, false, {}, {{"entrance", "in", "out"}}};
  const auto removals = discoveryRemovals(hallSettings(), door);
  EXPECT_EQ(topicsOf(removals), (std::vector<std::string>{
                                    "ha/binary_sensor/hall/door_person/config",
                                    "ha/sensor/hall/door_person_count/config",
                                    "ha/image/hall/door_snapshot/config",
                                    "ha/binary_sensor/hall/door_porch_person/config",
                                    "ha/sensor/hall/door_porch_person_count/config",
                                    "ha/binary_sensor/hall/door_porch_loitering/config",
                                    "ha/sensor/hall/door_entrance_in/config",
                                    "ha/sensor/hall/door_entrance_out/config",
                                }));
  for (const DiscoveryMessage& m : removals) EXPECT_EQ(m.payload, "") << m.topic;
}

}  // namespace
}  // namespace vigil
