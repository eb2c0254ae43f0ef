// `vigil run` publishing to a real mosquitto broker: the presence state and events of a real
// clip, Home Assistant discovery, the last will after kill -9, a broker restart, credentials.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>

#include "tests/model_paths.h"
#include "tests/mosquitto_broker.h"
#include "tests/mqtt_subscriber.h"
#include "tests/process.h"
#include "tests/temp_dir.h"
#include "tests/vigil_daemon.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::ChildProcess;
using testing::MosquittoBroker;
using testing::Received;
using testing::retainedBecomes;
using testing::retainedNow;
using testing::Subscriber;
using testing::waitForRetained;

// People walk up one at a time; the first is detected about 6 s in.
std::filesystem::path oneByOneClip() {
  return testing::videosDir() / "one-by-one-person-detection.mp4";
}

#define VIGIL_REQUIRE_CLIP_AND_BROKER()                  \
  do {                                                   \
    VIGIL_REQUIRE_MODEL();                               \
    VIGIL_REQUIRE_MOSQUITTO();                           \
    if (!std::filesystem::exists(oneByOneClip()))        \
      GTEST_SKIP() << "clip absent: " << oneByOneClip(); \
  } while (0)

std::string config(const MosquittoBroker& broker, const std::string& mqttExtra, bool loop = false) {
  // No HTTP server: the default port would collide with another test running beside this one.
  // node: test, so the topics are vigil/test/..., whatever the machine's host name.
  return "version: 1\n"
         "node: test\n"
         "http: {enabled: false}\n"
         "detector:\n  model: " +
         testing::modelDir().string() +
         "\n"
         "mqtt:\n  url: " +
         broker.url() + "\n  client_id: vigil-test\n" + mqttExtra +
         "cameras:\n"
         "  - name: door\n"
         "    source: 'file:" +
         oneByOneClip().string() + "'\n    detect_fps: 5\n    loop: " + (loop ? "true" : "false") +
         "\n"
         "    presence: {min_frames: 2, clear_after: 2}\n"
         "    zones:\n"
         "      - {name: left, polygon: [[0, 0], [0.5, 0], [0.5, 1], [0, 1]]}\n";
}

std::vector<std::string> on(const std::vector<Received>& received, const std::string& topic) {
  return testing::payloadsOn(received, topic);
}

bool hasTopic(const std::vector<Received>& received, const std::string& topic) {
  return !on(received, topic).empty();
}

TEST(MqttEventsTest, ClipGivesOffThenOnThenEventsAndOfflineAtStop) {
  VIGIL_REQUIRE_CLIP_AND_BROKER();
  MosquittoBroker broker;
  ASSERT_TRUE(broker.start());
  Subscriber subscriber(broker.url(), "#");
  ASSERT_TRUE(subscriber.connect());
  TempDir dir;
  std::ofstream(dir.path() / "cameras.yaml") << config(broker, "  snapshots: true\n");
  ChildProcess vigil({VIGIL_BINARY, "run", "--config", (dir.path() / "cameras.yaml").string()},
                     dir.path() / "log");
  ASSERT_TRUE(vigil.started());
  // The first person walks in about 6 s into the clip: wait for the ON, its event and its
  // snapshot, then stop the daemon cleanly.
  ASSERT_TRUE(subscriber.waitFor([](const auto& r) {
    return std::ranges::count(on(r, "vigil/test/door/person"), "ON") > 0 &&
           hasTopic(r, "vigil/test/events") && hasTopic(r, "vigil/test/door/person/snapshot");
  })) << vigil.log();
  auto stopped = vigil.stop(SIGTERM);
  ASSERT_TRUE(stopped.status.has_value()) << vigil.log();
  EXPECT_EQ(*stopped.status, 0) << vigil.log();
  // "offline" on vigil/status is the last message of a clean stop: everything before it has
  // arrived once it has (one connection, QoS 1, in order).
  ASSERT_TRUE(subscriber.waitFor([](const auto& r) {
    return std::ranges::count(on(r, "vigil/test/status"), "offline") > 0;
  })) << vigil.log();
  const auto& received = subscriber.received();

  ASSERT_FALSE(received.empty()) << vigil.log();
  EXPECT_EQ(received.front().topic, "vigil/test/status");
  EXPECT_EQ(on(received, "vigil/test/status"), (std::vector<std::string>{"online", "offline"}));
  EXPECT_EQ(retainedNow(broker.url(), "vigil/test/status"), "offline");
  // The camera's own availability: offline until its first frame (or online at once), online
  // while the clip plays, offline at the stop.
  auto cameraStatus = on(received, "vigil/test/door/status");
  ASSERT_FALSE(cameraStatus.empty()) << vigil.log();
  EXPECT_NE(std::find(cameraStatus.begin(), cameraStatus.end(), "online"), cameraStatus.end());
  EXPECT_EQ(cameraStatus.back(), "offline");
  EXPECT_EQ(retainedNow(broker.url(), "vigil/test/door/status"), "offline");

  // OFF before the first detection, ON with the person, OFF again at the clean stop.
  auto states = on(received, "vigil/test/door/person");
  ASSERT_GE(states.size(), 3U) << vigil.log();
  EXPECT_EQ(states.front(), "OFF");
  EXPECT_EQ(states[1], "ON");
  EXPECT_EQ(states.back(), "OFF");
  EXPECT_EQ(on(received, "vigil/test/door/person/count").front(), "0");

  std::vector<json> events;
  for (const std::string& payload : on(received, "vigil/test/events")) {
    events.push_back(json::parse(payload));
  }
  ASSERT_GE(events.size(), 2U) << vigil.log();
  const json& first = events.front();
  EXPECT_EQ(first["type"], "new");
  EXPECT_EQ(first["schema"], 1);
  EXPECT_EQ(first["camera"], "door");
  EXPECT_EQ(first["backend"], testing::autoCpuBackend());
  EXPECT_GE(first["count"].get<int>(), 1);
  EXPECT_GE(first["max_score"].get<double>(), 0.5);
  EXPECT_GT(first["latency_ms"].get<double>(), 0);
  EXPECT_FALSE(first["boxes"].empty());
  // Every event id opens with `new` and closes with exactly one `end`, nothing after it.
  std::map<std::string, std::vector<std::string>> byId;
  for (const json& e : events) {
    byId[e["event_id"].get<std::string>()].push_back(e["type"].get<std::string>());
  }
  for (const auto& [id, types] : byId) {
    EXPECT_EQ(types.front(), "new") << id;
    EXPECT_EQ(types.back(), "end") << id << ": the clean stop ends open events";
    EXPECT_EQ(std::count(types.begin(), types.end(), "end"), 1) << id;
  }

  auto snapshots = on(received, "vigil/test/door/person/snapshot");
  ASSERT_FALSE(snapshots.empty());
  cv::Mat jpeg = cv::imdecode(std::vector<unsigned char>(snapshots[0].begin(), snapshots[0].end()),
                              cv::IMREAD_COLOR);
  EXPECT_FALSE(jpeg.empty()) << "the snapshot is not a JPEG";

  // The new event's picture arrives before its ON and its `new` message (an automation that
  // fires on ON attaches this event's picture), and the `new` message names it and the node.
  auto firstIndex = [&](const std::string& topic, const std::string& payload) {
    for (std::size_t i = 0; i < received.size(); ++i) {
      if (received[i].topic == topic && (payload.empty() || received[i].payload == payload)) {
        return i;
      }
    }
    return received.size();
  };
  const std::size_t picture = firstIndex("vigil/test/door/person/snapshot", "");
  EXPECT_LT(picture, firstIndex("vigil/test/door/person", "ON"));
  EXPECT_LT(picture, firstIndex("vigil/test/events", ""));
  EXPECT_EQ(first["node"], "test");
  EXPECT_EQ(first["snapshot"],
            "/api/events/" + first["event_id"].get<std::string>() + "/snapshot.jpg");

  // Discovery: every config is JSON whose topics are the ones Vigil publishes.
  int configs = 0;
  for (const Received& r : received) {
    if (r.topic.rfind("homeassistant/", 0) != 0) continue;
    ++configs;
    json p = json::parse(r.payload);
    std::string state = p.contains("state_topic") ? p["state_topic"] : p["image_topic"];
    EXPECT_TRUE(hasTopic(received, state)) << r.topic << " names " << state;
    if (r.topic == "homeassistant/binary_sensor/test/status/config") continue;  // the node's
    EXPECT_EQ(p["availability"][0]["topic"], "vigil/test/status") << r.topic;
    EXPECT_TRUE(hasTopic(received, p["availability"][1]["topic"])) << r.topic;
    EXPECT_EQ(p["device"]["via_device"], "vigil_test") << r.topic;
  }
  // The node's status; camera: occupancy, count, image; zone left: occupancy, count.
  EXPECT_EQ(configs, 6);
}

TEST(MqttEventsTest, HomeAssistantBirthBrokerRestartAndKill9) {
  VIGIL_REQUIRE_CLIP_AND_BROKER();
  MosquittoBroker broker;  // no persistence: a restart forgets every retained message
  ASSERT_TRUE(broker.start());
  TempDir dir;
  std::ofstream(dir.path() / "cameras.yaml") << config(broker, "", /*loop=*/true);
  ChildProcess vigil({VIGIL_BINARY, "run", "--config", (dir.path() / "cameras.yaml").string()},
                     dir.path() / "log");
  ASSERT_TRUE(vigil.started());
  ASSERT_TRUE(retainedBecomes(broker.url(), "vigil/test/status", "online")) << vigil.log();

  // Home Assistant restarts and says so: the discovery configs come again.
  {
    Subscriber ha(broker.url(), "homeassistant/binary_sensor/#");
    ASSERT_TRUE(ha.connect());
    // The retained ones: the node's status, the camera's and the zone's occupancy.
    ASSERT_TRUE(ha.waitForCount(3));
    ASSERT_TRUE(ha.publish("homeassistant/status", "online", false));
    EXPECT_TRUE(ha.waitForCount(6)) << vigil.log();
    EXPECT_FALSE(ha.received()[3].retained) << "sent again, not the broker's retained copy";
  }

  // The broker restarts empty; Vigil reconnects and publishes its state again.
  ASSERT_TRUE(broker.restart());
  EXPECT_TRUE(retainedBecomes(broker.url(), "vigil/test/status", "online")) << vigil.log();
  auto state = waitForRetained(broker.url(), "vigil/test/door/person");
  ASSERT_TRUE(state.has_value()) << "state not republished: " << vigil.log();
  EXPECT_TRUE(*state == "ON" || *state == "OFF") << *state;
  EXPECT_TRUE(waitForRetained(broker.url(), "homeassistant/sensor/test/door_person_count/config")
                  .has_value());

  // A crash: the broker publishes the last will.
  ASSERT_TRUE(vigil.stop(SIGKILL).status.has_value());
  EXPECT_TRUE(retainedBecomes(broker.url(), "vigil/test/status", "offline"));
}

TEST(MqttEventsTest, WrongPasswordIsLoggedAndRetriedRightOneFromTheEnvironmentWorks) {
  VIGIL_REQUIRE_CLIP_AND_BROKER();
  MosquittoBroker broker(MosquittoBroker::Options{.username = "vigil", .password = "right"});
  ASSERT_TRUE(broker.start());
  TempDir dir;
  std::ofstream(dir.path() / "wrong-password") << "hunter2\n";
  std::ofstream(dir.path() / "wrong.yaml")
      << config(broker, "  username: vigil\n  password_file: wrong-password\n", true);
  {
    ChildProcess vigil({VIGIL_BINARY, "run", "--config", (dir.path() / "wrong.yaml").string()},
                       dir.path() / "wrong.log");
    ASSERT_TRUE(vigil.started());
    EXPECT_TRUE(vigil.waitForLog("not authorized (bad user name or password)")) << vigil.log();
    EXPECT_TRUE(vigil.waitForLog("retrying")) << vigil.log();
    auto stopped = vigil.stop(SIGTERM);
    ASSERT_TRUE(stopped.status.has_value());
    EXPECT_EQ(*stopped.status, 0) << "a refused broker does not stop the daemon: " << vigil.log();
    EXPECT_EQ(vigil.log().find("hunter2"), std::string::npos) << "a password is never logged";
  }
  std::ofstream(dir.path() / "env.yaml") << config(broker, "  username: vigil\n", true);
  ::setenv("VIGIL_MQTT_PASSWORD", "right", 1);
  ChildProcess vigil({VIGIL_BINARY, "run", "--config", (dir.path() / "env.yaml").string()},
                     dir.path() / "env.log");
  ::unsetenv("VIGIL_MQTT_PASSWORD");
  ASSERT_TRUE(vigil.started());
  EXPECT_TRUE(retainedBecomes(broker.url(), "vigil/test/status", "online",
                              Subscriber::Options{.username = "vigil", .password = "right"}))
      << vigil.log();
  ASSERT_TRUE(vigil.stop(SIGTERM).status.has_value());
}

}  // namespace
}  // namespace vigil
