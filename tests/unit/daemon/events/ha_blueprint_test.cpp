// The Home Assistant blueprint Vigil ships (packaging/homeassistant/vigil_person_alert.yaml)
// against what Vigil's discovery announces: it parses, every `!input` it uses is declared, the
// sensors its selector offers are exactly the person sensors of a camera and of its zones, and the
// image entity its template derives from the triggering sensor is that camera's snapshot.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "daemon/events/ha_discovery.h"
#include "daemon/events/ha_entities.h"

namespace vigil {
namespace {

using nlohmann::json;

const std::filesystem::path kBlueprint =
    std::filesystem::path(VIGIL_SOURCE_DIR) / "packaging/homeassistant/vigil_person_alert.yaml";

// An entity as Home Assistant makes it from a discovery config.
struct AnnouncedEntity {
  std::string domain;  // the config topic's component: binary_sensor, sensor, image
  json config;

  // Home Assistant's entity id for it: the domain, then the device's and the entity's names
  // slugified (an MQTT entity with a device and a name is named within its device), as long as
  // nothing else took that id and the config names no default_entity_id.
  std::string entityId() const {
    std::string slug;
    for (char c :
         config["device"]["name"].get<std::string>() + " " + config["name"].get<std::string>()) {
      const bool word = std::isalnum(static_cast<unsigned char>(c)) != 0;
      if (word) slug += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (!word && !slug.empty() && slug.back() != '_') slug += '_';
    }
    return domain + "." + slug;
  }
  json device() const { return config["device"]["identifiers"]; }
};

class DiscoverySink : public MessageSink {
 public:
  void publish(std::string topic, std::string payload, bool) override {
    // <ha_prefix>/<component>/<node>/<object>/config
    const auto first = topic.find('/');
    const auto second = topic.find('/', first + 1);
    entities.push_back({topic.substr(first + 1, second - first - 1), json::parse(payload)});
  }
  std::vector<AnnouncedEntity> entities;
};

// What discovery announces for the node "hall" and its camera "front" with a zone "gate" that
// says loitering, a zone "path", and snapshots on.
std::vector<AnnouncedEntity> announced() {
  DiscoverySink sink;
  DiscoverySettings settings;
  settings.instance = "hall";
  settings.topicPrefix = "vigil/hall";
  HaEntities entities(settings, true, true, &sink);
  entities.announceNode();
  PublishedCamera front;
  front.name = "front";
  front.zones = {
      ZoneSpec{"gate", {{0, 0}, {0.5F, 0}, {0.5F, 1}, {0, 1}}, 1, std::chrono::milliseconds(10000)},
      ZoneSpec{"path", {{0.5F, 0}, {1, 0}, {1, 1}, {0.5F, 1}}}};
  entities.announce(front);
  return sink.entities;
}

YAML::Node loadBlueprint() {
  try {
    return YAML::LoadFile(kBlueprint.string());
  } catch (const YAML::Exception& e) {
    ADD_FAILURE() << kBlueprint << ": " << e.what();
    return {};
  }
}

// Every `!input` scalar in `node`, depth first.
void collectInputs(const YAML::Node& node, std::vector<std::string>& out) {
  if (node.IsScalar() && node.Tag() == "!input") out.push_back(node.Scalar());
  if (node.IsSequence()) {
    for (const YAML::Node& item : node) collectInputs(item, out);
  }
  if (node.IsMap()) {
    for (const auto& entry : node) collectInputs(entry.second, out);
  }
}

// The actions' step that has `key`.
YAML::Node stepWith(const YAML::Node& blueprint, const std::string& key) {
  for (const YAML::Node& step : blueprint["actions"]) {
    if (step[key]) return step;
  }
  ADD_FAILURE() << "no action with " << key;
  return {};
}

TEST(HaBlueprintTest, ItIsAnAutomationBlueprintWhoseInputsAreAllDeclaredAndUsed) {
  const YAML::Node b = loadBlueprint();
  ASSERT_TRUE(b.IsMap());
  const YAML::Node meta = b["blueprint"];
  ASSERT_TRUE(meta.IsMap());
  EXPECT_FALSE(meta["name"].as<std::string>("").empty());
  EXPECT_FALSE(meta["description"].as<std::string>("").empty());
  EXPECT_EQ(meta["domain"].as<std::string>(""), "automation");
  const YAML::Node inputs = meta["input"];
  ASSERT_TRUE(inputs.IsMap());
  std::set<std::string> declared;
  for (const auto& entry : inputs) {
    declared.insert(entry.first.as<std::string>());
    EXPECT_TRUE(entry.second["selector"].IsMap()) << entry.first.as<std::string>();
  }
  EXPECT_EQ(declared, (std::set<std::string>{"person_sensors", "notify_device", "cooldown"}));
  EXPECT_EQ(inputs["cooldown"]["default"].as<int>(0), 120);

  std::vector<std::string> used;
  collectInputs(b, used);
  for (const std::string& name : used) EXPECT_TRUE(declared.count(name)) << "!input " << name;
  EXPECT_EQ(std::set<std::string>(used.begin(), used.end()), declared) << "every input is used";

  // Turns on, notifies, then waits the cooldown: `single` drops what comes meanwhile.
  EXPECT_EQ(b["mode"].as<std::string>(""), "single");
  const YAML::Node trigger = b["triggers"][0];
  EXPECT_EQ(trigger["trigger"].as<std::string>(""), "state");
  EXPECT_EQ(trigger["entity_id"].Tag(), "!input");
  EXPECT_EQ(trigger["entity_id"].Scalar(), "person_sensors");
  EXPECT_EQ(trigger["to"].as<std::string>(""), "on");
  const YAML::Node notify = stepWith(b, "type");
  EXPECT_EQ(notify["domain"].as<std::string>(""), "mobile_app");
  EXPECT_EQ(notify["type"].as<std::string>(""), "notify");
  EXPECT_EQ(notify["device_id"].Scalar(), "notify_device");
  EXPECT_EQ(
      inputs["notify_device"]["selector"]["device"]["filter"][0]["integration"].as<std::string>(""),
      "mobile_app");
  const YAML::Node last = b["actions"][b["actions"].size() - 1];
  EXPECT_EQ(last["delay"]["seconds"].Scalar(), "cooldown");
}

TEST(HaBlueprintTest, ItOffersExactlyTheCamerasAndTheZonesPersonSensors) {
  const YAML::Node filter =
      loadBlueprint()["blueprint"]["input"]["person_sensors"]["selector"]["entity"]["filter"][0];
  ASSERT_TRUE(filter.IsMap());
  EXPECT_EQ(filter["integration"].as<std::string>(""), "mqtt");
  std::set<std::string> offered;
  for (const AnnouncedEntity& e : announced()) {
    if (e.domain == filter["domain"].as<std::string>("") &&
        e.config.value("device_class", "") == filter["device_class"].as<std::string>("")) {
      offered.insert(e.config["unique_id"].get<std::string>());
      EXPECT_EQ(e.config["payload_on"], "ON") << "Home Assistant's state 'on', the trigger's";
    }
  }
  EXPECT_EQ(offered, (std::set<std::string>{"hall_front_person", "hall_front_gate_person",
                                            "hall_front_path_person"}))
      << "not the loitering sensor, not the node's status";
}

TEST(HaBlueprintTest, TheNotificationShowsTheTriggeringCamerasSnapshot) {
  const YAML::Node b = loadBlueprint();
  const YAML::Node variables = stepWith(b, "variables")["variables"];
  EXPECT_EQ(variables["camera_device"].as<std::string>(""), "{{ device_id(trigger.entity_id) }}");
  const std::string derive = variables["snapshot_entity"].as<std::string>("");
  EXPECT_NE(derive.find("device_entities(camera_device)"), std::string::npos) << derive;
  const std::smatch pattern = [&] {
    std::smatch m;
    static const std::regex kSelect(R"(select\('match', '([^']*)'\) \| first)");
    EXPECT_TRUE(std::regex_search(derive, m, kSelect)) << derive;
    return m;
  }();
  ASSERT_EQ(pattern.size(), 2U);
  // Jinja's `match` is Python's re.match: anchored at the start.
  const std::regex snapshotId(pattern[1].str());
  const std::string image = stepWith(b, "type")["data"]["image"].as<std::string>("");
  EXPECT_NE(image.find("'/api/image_proxy/' ~ snapshot_entity"), std::string::npos) << image;

  const std::vector<AnnouncedEntity> entities = announced();
  int sensors = 0;
  for (const AnnouncedEntity& sensor : entities) {
    if (sensor.config.value("device_class", "") != "occupancy") continue;
    ++sensors;
    // device_entities(device_id(sensor)): the entities of the sensor's device.
    std::vector<const AnnouncedEntity*> picked;
    for (const AnnouncedEntity& e : entities) {
      if (e.device() == sensor.device() &&
          std::regex_search(e.entityId(), snapshotId, std::regex_constants::match_continuous)) {
        picked.push_back(&e);
      }
    }
    ASSERT_EQ(picked.size(), 1U) << sensor.entityId();
    EXPECT_EQ(picked[0]->domain, "image");
    EXPECT_EQ(picked[0]->config["image_topic"], snapshotTopic("vigil/hall", "front"))
        << sensor.entityId() << ": the camera's snapshot, also for a zone's sensor";
    EXPECT_EQ(picked[0]->entityId(), "image.front_person_snapshot");
  }
  EXPECT_EQ(sensors, 3) << "the camera's and its two zones'";
}

}  // namespace
}  // namespace vigil
