// `vigil run` counting line crossings on a real clip with ground truth, publishing to a real
// mosquitto broker: the events, the retained counts, /metrics and /api/status agree with one
// another and with `vigil eval-lines` on the daemon's own --tracks-out; a restart continues the
// counts from the state directory; a reload that moves a line restarts its count only.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "daemon/commands/line_commands.h"
#include "tests/http_get.h"
#include "tests/model_paths.h"
#include "tests/mosquitto_broker.h"
#include "tests/mqtt_subscriber.h"
#include "tests/temp_dir.h"
#include "tests/vigil_daemon.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::kDeadline;
using testing::MosquittoBroker;
using testing::Subscriber;
using testing::VigilDaemon;

// Crossings by "line direction".
using Counts = std::map<std::string, int>;

std::filesystem::path stadtmitte() { return testing::videosDir() / "TUD-Stadtmitte.mp4"; }
std::filesystem::path stadtmitteTruth() {
  return testing::videosDir() / "TUD-Stadtmitte.person.json";
}

// TUD-Stadtmitte (640x480, 25 fps, persons walking left and right) at 5 detections a second,
// two vertical lines across where they walk. `door`'s x (in pixels here, a fraction in the
// file) and the detection rate vary.
std::string lineConfig(const MosquittoBroker& broker, int doorX, double detectFps) {
  return fmt::format(
      "version: 1\n"
      "node: test\n"
      "http: {{listen: 127.0.0.1:0}}\n"
      "detector: {{model: {}}}\n"
      "mqtt: {{url: {}, client_id: vigil-line-test}}\n"
      "cameras:\n"
      "  - name: square\n"
      "    source: 'file:{}'\n"
      "    fps: 25\n"
      "    detect_fps: {}\n"
      "    lines:\n"
      "      - name: door\n"
      "        points: [[{}, 0], [{}, 1]]\n"
      "        names: {{in: enter, out: leave}}\n"
      "      - {{name: middle, points: [[0.5, 0], [0.5, 1]]}}\n",
      testing::modelDir().string(), broker.url(), stadtmitte().string(), detectFps, doorX / 640.0,
      doorX / 640.0);
}

// vigil_line_crossings_total of the camera `square` from /metrics.
Counts metricCounts(VigilDaemon& vigil) {
  Counts out;
  auto reply = testing::httpGet(vigil.port(), "/metrics");
  if (!reply || reply->status != 200) return out;
  std::istringstream lines(reply->body);
  const std::string prefix = "vigil_line_crossings_total{camera=\"square\",line=\"";
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(prefix, 0) != 0) continue;
    const std::string rest = line.substr(prefix.size());
    const std::string name = rest.substr(0, rest.find('"'));
    const auto d = rest.find("direction=\"") + 11;
    const std::string direction = rest.substr(d, rest.find('"', d) - d);
    out[name + " " + direction] = static_cast<int>(std::stod(rest.substr(rest.rfind(' ') + 1)));
  }
  return out;
}

// The counts /api/status shows for the camera's lines.
Counts statusCounts(VigilDaemon& vigil) {
  Counts out;
  const json camera = vigil.camera("square");
  if (!camera.is_object()) return out;
  for (const json& l : camera["lines"]) {
    for (const std::string d : {"in", "out"}) {
      out[l["name"].get<std::string>() + " " + d] = l["counts"][d].get<int>();
    }
  }
  return out;
}

// The retained counts on the broker now.
Counts retainedCounts(const MosquittoBroker& broker) {
  Counts out;
  for (const std::string line : {"door", "middle"}) {
    for (const std::string d : {"in", "out"}) {
      auto payload = testing::retainedNow(broker.url(), "vigil/test/square/" + line + "/" + d);
      out[line + " " + d] = payload ? std::stoi(*payload) : -1;
    }
  }
  return out;
}

Counts eventCounts(const std::vector<testing::Received>& received) {
  Counts out;
  for (const std::string& p : testing::payloadsOn(received, "vigil/test/line_events")) {
    const json e = json::parse(p);
    ++out[e["line"].get<std::string>() + " " + e["direction"].get<std::string>()];
  }
  return out;
}

int total(const Counts& counts) {
  int n = 0;
  for (const auto& [key, value] : counts) n += value;
  return n;
}

json evalLines(const std::filesystem::path& tracks) {
  EvalLinesOptions o;
  o.groundTruth = stadtmitteTruth().string();
  o.tracks = tracks.string();
  o.lines = {"door=480,0,480,480", "middle=320,0,320,480"};
  o.framesInTracks = true;
  o.json = true;
  std::ostringstream out;
  EXPECT_EQ(runEvalLinesCommand(o, out), 0);
  std::string last;
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);) last = line;
  return json::parse(last);
}

TEST(LineDaemonTest, CountsAgreeEverywhereSurviveARestartAndAMovedLineStartsAgain) {
  VIGIL_REQUIRE_MODEL();
  VIGIL_REQUIRE_MOSQUITTO();
  if (!std::filesystem::exists(stadtmitte()) || !std::filesystem::exists(stadtmitteTruth())) {
    GTEST_SKIP() << stadtmitte() << " or its ground truth absent";
  }
  MosquittoBroker broker;
  ASSERT_TRUE(broker.start());
  Subscriber subscriber(broker.url(), "vigil/test/#");
  ASSERT_TRUE(subscriber.connect());
  TempDir dir;
  // A state directory that does not exist yet: the daemon makes it.
  const std::string state = (dir.path() / "state" / "vigil").string();
  Counts counted;
  {
    VigilDaemon vigil(dir.path(), lineConfig(broker, 480, 5),
                      {"--tracks-out", dir.path().string(), "--state-dir", state});
    ASSERT_NE(vigil.port(), 0) << vigil.log();
    ASSERT_TRUE(vigil.waitForStatus(
        [](const json& s) { return s["cameras"][0]["state"] == "ended"; }, kDeadline + 10s))
        << vigil.log();
    // The clip's last result may still be on its way: the counts settle where every view of
    // them agrees.
    ASSERT_TRUE(testing::waitUntil(
        [&] {
          subscriber.waitFor([](const auto&) { return false; }, 200ms);  // collects meanwhile
          counted = metricCounts(vigil);
          return total(counted) > 0 && counted == statusCounts(vigil) &&
                 counted == eventCounts(subscriber.received());
        },
        kDeadline, 100ms))
        << "metrics " << json(metricCounts(vigil)).dump() << " status "
        << json(statusCounts(vigil)).dump() << " events "
        << json(eventCounts(subscriber.received())).dump() << " retained "
        << json(retainedCounts(broker)).dump() << "\n"
        << vigil.log();
    EXPECT_EQ(retainedCounts(broker), counted);
    const auto events = testing::payloadsOn(subscriber.received(), "vigil/test/line_events");
    const json first = json::parse(events.front());
    EXPECT_EQ(first["type"], "cross");
    EXPECT_EQ(first["camera"], "square");
    EXPECT_TRUE(first["box"].contains("x")) << first.dump();
    for (const std::string& p : events) {
      const json e = json::parse(p);
      if (e["line"] == "door") {
        EXPECT_EQ(e["direction_name"], e["direction"] == "in" ? "enter" : "leave") << p;
      }
    }
    const auto sensor =
        testing::retainedNow(broker.url(), "homeassistant/sensor/test/square_door_in/config");
    ASSERT_TRUE(sensor) << "no Home Assistant sensor for the door's in count";
    EXPECT_EQ(json::parse(*sensor)["state_class"], "total_increasing");
    EXPECT_EQ(json::parse(*sensor)["name"], "door enter");
    EXPECT_EQ(vigil.stop().status, 0) << vigil.log();
  }
  // `vigil eval-lines` on what the daemon tracked counts what the daemon counted.
  const json scores = evalLines(dir.path() / "square.txt");
  for (const json& l : scores["lines"]) {
    for (const std::string d : {"in", "out"}) {
      EXPECT_EQ(l[d]["tracks"].get<int>(), counted[l["name"].get<std::string>() + " " + d])
          << scores.dump();
    }
  }
  EXPECT_GT(scores["truth"].get<int>(), 0) << scores.dump();

  // A restart continues the counts: they are there before the camera sees anybody (detection
  // once in 100 s: the first frame only, which crosses nothing).
  VigilDaemon again(dir.path(), lineConfig(broker, 480, 0.01), {"--state-dir", state});
  ASSERT_NE(again.port(), 0) << again.log();
  EXPECT_TRUE(again.waitForStatus([](const json& s) { return s["cameras"].size() == 1; }));
  // /metrics is rendered at most every 0.5 s (StatusApi): what it says catches up within that.
  EXPECT_TRUE(testing::waitUntil([&] { return metricCounts(again) == counted; }, kDeadline, 100ms))
      << json(metricCounts(again)).dump() << "\n"
      << again.log();
  EXPECT_EQ(statusCounts(again), counted);
  EXPECT_EQ(retainedCounts(broker), counted);

  // A reload that moves the door: its counts start again at 0, the middle line keeps its.
  std::ofstream(dir.path() / "cameras.yaml") << lineConfig(broker, 470, 0.01);
  again.process().signal(SIGHUP);
  Counts expected = counted;
  expected["door in"] = 0;
  expected["door out"] = 0;
  EXPECT_TRUE(testing::waitUntil([&] { return statusCounts(again) == expected; }, kDeadline, 100ms))
      << json(statusCounts(again)).dump() << "\n"
      << again.log();
  EXPECT_TRUE(testing::waitUntil([&] { return metricCounts(again) == expected; }, kDeadline, 100ms))
      << json(metricCounts(again)).dump();
  EXPECT_TRUE(
      testing::waitUntil([&] { return retainedCounts(broker) == expected; }, kDeadline, 200ms))
      << json(retainedCounts(broker)).dump();
  EXPECT_EQ(again.stop().status, 0) << again.log();
}

}  // namespace
}  // namespace vigil
