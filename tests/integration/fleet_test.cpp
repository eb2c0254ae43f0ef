// Several Vigil boxes on one real broker and one real Prometheus, each with nothing set but its
// node name (on one machine the three share a host name, which is the default node): their
// MQTT client ids, topics and Home Assistant devices do not collide, Prometheus scrapes all
// three, and the shipped alerting rules fire when one box is killed.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "tests/http_get.h"
#include "tests/model_paths.h"
#include "tests/mosquitto_broker.h"
#include "tests/mqtt_subscriber.h"
#include "tests/prometheus_server.h"
#include "tests/temp_dir.h"
#include "tests/vigil_daemon.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::MosquittoBroker;
using testing::Received;
using testing::Subscriber;

const std::vector<std::string> kNodes{"hall", "shop", "office"};

std::filesystem::path fleetClip() { return testing::videosDir() / "TUD-Campus.mp4"; }

// A box as a user sets it up: the broker's url, HTTP for Prometheus, one camera named like the
// other boxes' cameras; client id, topic prefix, backend and threads are the defaults.
std::string boxConfig(const std::string& node, const MosquittoBroker& broker) {
  return "version: 1\nnode: " + node + "\ndetector:\n  model: " + testing::modelDir().string() +
         "\nhttp:\n  listen: 127.0.0.1:0\nmqtt:\n  url: " + broker.url() +
         "\ncameras:\n  - {name: door, source: 'file:" + fleetClip().string() +
         "', loop: true, detect_fps: 1}\n";
}

// The shipped rules, with VigilDown's `for: 2m` made 2 s so that the test need not wait two
// minutes; the expressions are the shipped ones (their timing is promtool's rule test).
std::string rulesWithShortDown() {
  std::ifstream in(std::filesystem::path(VIGIL_SOURCE_DIR) /
                   "packaging/prometheus/vigil-rules.yml");
  std::stringstream text;
  text << in.rdbuf();
  std::string rules = text.str();
  const std::regex downFor("(alert: VigilDown\\n\\s+expr: [^\\n]+\\n\\s+for: )2m");
  std::string shortened = std::regex_replace(rules, downFor, "$012s");
  return shortened == rules ? std::string() : shortened;
}

std::string metricsOf(testing::VigilDaemon& box) {
  auto reply = testing::httpGet(box.port(), "/metrics");
  return reply && reply->status == 200 ? reply->body : std::string();
}

TEST(FleetTest, ThreeBoxesShareOneBrokerAndOnePrometheusAndAnAlertFiresForTheOneKilled) {
  VIGIL_REQUIRE_MODEL();
  VIGIL_REQUIRE_MOSQUITTO();
  VIGIL_REQUIRE_PROMETHEUS();
  if (!std::filesystem::exists(fleetClip())) GTEST_SKIP() << "clip absent: " << fleetClip();
  MosquittoBroker broker;
  ASSERT_TRUE(broker.start());
  Subscriber everything(broker.url(), "#");
  ASSERT_TRUE(everything.connect());

  std::map<std::string, TempDir> dirs;
  std::map<std::string, std::unique_ptr<testing::VigilDaemon>> boxes;
  for (const std::string& node : kNodes) {
    boxes[node] =
        std::make_unique<testing::VigilDaemon>(dirs[node].path(), boxConfig(node, broker));
  }
  for (const std::string& node : kNodes) {
    ASSERT_NE(boxes[node]->port(), 0) << boxes[node]->log();
    ASSERT_TRUE(testing::retainedBecomes(broker.url(), "vigil/" + node + "/status", "online"))
        << boxes[node]->log();
    ASSERT_TRUE(boxes[node]->waitDetected("door", 0, 1)) << boxes[node]->log();
  }

  // Every box announced its camera (discovery and the retained state) under its own name.
  ASSERT_TRUE(everything.waitFor([](const std::vector<Received>& r) {
    std::set<std::string> announced;
    for (const Received& m : r) {
      if (m.topic.ends_with("/door_person/config") || m.topic.ends_with("/door/person")) {
        announced.insert(m.topic);
      }
    }
    return announced.size() == 2 * kNodes.size();
  }));
  std::set<std::string> devices;
  std::set<std::string> uniqueIds;
  std::size_t discoveries = 0;
  std::map<std::string, std::set<std::string>> topicsByNode;
  for (const Received& m : everything.received()) {
    if (m.topic.starts_with("homeassistant/")) {
      if (m.payload.empty()) continue;
      json config = json::parse(m.payload);
      ++discoveries;
      uniqueIds.insert(config["unique_id"].get<std::string>());
      devices.insert(config["device"]["identifiers"][0].get<std::string>());
      continue;
    }
    if (!m.topic.starts_with("vigil/")) continue;
    // vigil/<node>/...: a topic outside the three boxes' prefixes is one they would share.
    const std::string node = m.topic.substr(6, m.topic.find('/', 6) - 6);
    ASSERT_TRUE(std::find(kNodes.begin(), kNodes.end(), node) != kNodes.end())
        << m.topic << " is not under vigil/<node>/";
    topicsByNode[node].insert(m.topic.substr(6 + node.size()));
  }
  EXPECT_EQ(devices, (std::set<std::string>{"vigil_hall", "vigil_hall_door", "vigil_shop",
                                            "vigil_shop_door", "vigil_office",
                                            "vigil_office_door"}))
      << "a device per box and one per camera";
  EXPECT_EQ(uniqueIds.size(), discoveries) << "a unique_id announced twice";
  for (const std::string& node : kNodes) {
    EXPECT_TRUE(topicsByNode[node].contains("/door/person")) << node;
    EXPECT_TRUE(topicsByNode[node].contains("/status")) << node;
    json status = boxes[node]->status();
    EXPECT_EQ(status["node"], node);
    EXPECT_EQ(status["backend"]["configured"], "auto");
    const std::string metrics = metricsOf(*boxes[node]);
    EXPECT_NE(metrics.find("vigil_node_info{node=\"" + node + "\"} 1"), std::string::npos);
    // Three clients with one id would throw each other off the broker again and again.
    EXPECT_NE(metrics.find("vigil_mqtt_connected 1"), std::string::npos) << node;
    EXPECT_NE(metrics.find("vigil_mqtt_reconnects_total 0"), std::string::npos) << node;
  }

  // One Prometheus scrapes the three, with the shipped rules.
  TempDir promDir;
  const std::string rules = rulesWithShortDown();
  ASSERT_FALSE(rules.empty()) << "VigilDown's `for: 2m` not found in vigil-rules.yml";
  std::ofstream(promDir.path() / "vigil-rules.yml") << rules;
  std::string targets;
  std::map<std::string, std::string> instanceOf;
  for (const std::string& node : kNodes) {
    instanceOf[node] = "127.0.0.1:" + std::to_string(boxes[node]->port());
    targets += (targets.empty() ? "'" : ", '") + instanceOf[node] + "'";
  }
  testing::PrometheusServer prometheus;
  ASSERT_TRUE(prometheus.start(promDir.path(),
                               "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                               "  evaluation_interval: 1s\nrule_files:\n  - " +
                                   (promDir.path() / "vigil-rules.yml").string() +
                                   "\nscrape_configs:\n  - job_name: vigil\n    static_configs:\n"
                                   "      - targets: [" +
                                   targets + "]\n"));
  json up;
  ASSERT_TRUE(testing::waitUntil(
      [&] {
        up = prometheus.query("up{job=\"vigil\"} == 1");
        return up.size() == kNodes.size();
      },
      testing::kDeadline, 500ms))
      << up.dump() << "\n"
      << prometheus.log();
  json nodes = prometheus.query("vigil_node_info");
  EXPECT_EQ(nodes.size(), kNodes.size()) << nodes.dump();
  EXPECT_TRUE(prometheus.alerts().empty()) << prometheus.alerts().dump();

  // shop dies without a word: the broker says it for it, Prometheus sees it down, the alert
  // fires for shop alone, and the other two stay online.
  boxes["shop"]->stop(SIGKILL);
  EXPECT_TRUE(testing::retainedBecomes(broker.url(), "vigil/shop/status", "offline"));
  json alerts;
  ASSERT_TRUE(testing::waitUntil(
      [&] {
        alerts = prometheus.alerts();
        return std::any_of(alerts.begin(), alerts.end(), [](const json& a) {
          return a["labels"]["alertname"] == "VigilDown" && a["state"] == "firing";
        });
      },
      testing::kDeadline, 500ms))
      << alerts.dump() << "\n"
      << prometheus.log();
  for (const json& a : alerts) {
    if (a["labels"]["alertname"] != "VigilDown") continue;
    EXPECT_EQ(a["labels"]["instance"], instanceOf["shop"]) << a.dump();
  }
  for (const std::string node : {"hall", "office"}) {
    EXPECT_EQ(testing::retainedNow(broker.url(), "vigil/" + node + "/status"), "online");
    EXPECT_TRUE(boxes[node]->stop().status.has_value());
  }
  EXPECT_TRUE(prometheus.process().stop(SIGTERM).status.has_value());
}

}  // namespace
}  // namespace vigil
