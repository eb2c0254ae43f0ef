// `vigil run` tracking a real clip with ground truth and publishing to a real mosquitto broker:
// the identities it keeps (scored against the ground truth with `vigil eval-tracks`), the zone
// events of its tracks, loitering, and the tracked persons in the presence events.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "detector/track/mot_io.h"
#include "tests/eval_tracks_json.h"
#include "tests/model_paths.h"
#include "tests/mosquitto_broker.h"
#include "tests/mqtt_subscriber.h"
#include "tests/process.h"
#include "tests/temp_dir.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::ChildProcess;
using testing::kDeadline;
using testing::MosquittoBroker;
using testing::Subscriber;

// TUD-Stadtmitte: 179 frames at 25 fps (7.2 s), 10 persons walking across a square.
std::filesystem::path stadtmitte() { return testing::videosDir() / "TUD-Stadtmitte.mp4"; }
std::filesystem::path stadtmitteTruth() {
  return testing::videosDir() / "TUD-Stadtmitte.person.json";
}

std::string trackingConfig(const MosquittoBroker& broker) {
  return "version: 1\n"
         "node: test\n"
         "http: {enabled: false}\n"
         "detector:\n  model: " +
         testing::modelDir().string() + "\nmqtt:\n  url: " + broker.url() +
         "\n  client_id: vigil-tracking-test\n"
         "cameras:\n"
         "  - name: square\n"
         "    source: 'file:" +
         stadtmitte().string() +
         "'\n    fps: 25\n    detect_fps: 5\n"
         "    presence: {min_frames: 2, clear_after: 2}\n"
         "    zones:\n"
         "      - {name: left, polygon: [[0, 0], [0.5, 0], [0.5, 1], [0, 1]], min_frames: 2, "
         "loiter_after: 2}\n"
         "      - {name: right, polygon: [[0.5, 0], [1, 0], [1, 1], [0.5, 1]], min_frames: 2}\n";
}

json evalDaemonTracks(const std::filesystem::path& tracks) {
  EvalTracksOptions options;
  options.groundTruth = stadtmitteTruth().string();
  options.tracks = tracks.string();
  options.framesInTracks = true;
  return testing::evalTracksJson(options);
}

std::vector<json> parsed(const std::vector<std::string>& payloads) {
  std::vector<json> out;
  for (const std::string& p : payloads) out.push_back(json::parse(p));
  return out;
}

TEST(TrackingDaemonTest, IdsHoldThroughAClipAndZonesSayEnterLeaveAndLoiterOnce) {
  VIGIL_REQUIRE_MODEL();
  VIGIL_REQUIRE_MOSQUITTO();
  if (!std::filesystem::exists(stadtmitte()) || !std::filesystem::exists(stadtmitteTruth())) {
    GTEST_SKIP() << stadtmitte() << " or its ground truth absent";
  }
  MosquittoBroker broker;
  ASSERT_TRUE(broker.start());
  Subscriber subscriber(broker.url(), "#");
  ASSERT_TRUE(subscriber.connect());
  TempDir dir;
  std::ofstream(dir.path() / "cameras.yaml") << trackingConfig(broker);
  // The clip plays for 7.2 s once the detector is loaded; 10 s leave the tracks time to end.
  ChildProcess vigil({VIGIL_BINARY, "run", "--config", (dir.path() / "cameras.yaml").string(),
                      "--duration", "10", "--tracks-out", dir.path().string()},
                     dir.path() / "log");
  ASSERT_TRUE(vigil.started());
  auto status = vigil.wait(kDeadline + 10s);
  ASSERT_TRUE(status.has_value()) << vigil.log();
  EXPECT_EQ(*status, 0) << vigil.log();
  ASSERT_TRUE(subscriber.waitFor([](const auto& r) {
    auto states = testing::payloadsOn(r, "vigil/test/status");
    return std::find(states.begin(), states.end(), "offline") != states.end();
  })) << vigil.log();
  const auto& received = subscriber.received();

  // Identities against the ground truth, on the frames the daemon tracked (about every fifth).
  // At 5 detections per second the IoU baseline switches 16 times on this clip (IDF1 0.600)
  // and `vigil track` 6 times (IDF1 0.796; bench/tracking.md). The daemon picks its frames by
  // time, so which frames it tracks depends on the machine: 6 switches here on a quiet machine,
  // 11 under ASan (IDF1 0.788). It must beat the baseline.
  const json scores = evalDaemonTracks(dir.path() / "square.txt");
  EXPECT_GE(scores["frames"].get<int>(), 25) << scores.dump();
  EXPECT_LT(scores["IDSW"].get<int>(), 16) << scores.dump();
  EXPECT_GE(scores["IDF1"].get<double>(), 0.7) << scores.dump();
  auto recorded = readMotText(dir.path() / "square.txt");
  ASSERT_TRUE(recorded) << recorded.error().message;
  std::set<std::uint64_t> recordedIds;
  for (const auto& [frame, boxes] : *recorded) {
    for (const MotBox& b : boxes) recordedIds.insert(b.id);
  }

  // Zone events: per track and zone, enter, at most one loiter, then leave, for every visit;
  // the clean stop (or the tracks' end when the clip ends) leaves no visit open.
  const std::vector<json> zoneEvents =
      parsed(testing::payloadsOn(received, "vigil/test/zone_events"));
  std::map<std::pair<std::string, std::uint64_t>, std::string> visits;
  std::map<std::string, int> enters;
  int loiters = 0;
  for (const json& e : zoneEvents) {
    EXPECT_EQ(e["camera"], "square");
    const auto key =
        std::make_pair(e["zone"].get<std::string>(), e["track_id"].get<std::uint64_t>());
    EXPECT_TRUE(recordedIds.contains(key.second))
        << e.dump() << ": not a track the daemon reported";
    std::string& seen = visits[key];
    const std::string type = e["type"];
    if (type == "enter") {
      EXPECT_TRUE(seen.empty() || seen.back() == 'L') << e.dump() << " after " << seen;
      seen += 'E';
      ++enters[key.first];
    } else if (type == "loiter") {
      EXPECT_EQ(key.first, "left") << "only the left zone has loiter_after";
      EXPECT_EQ(seen.back(), 'E') << e.dump() << ": once per visit, inside it; after " << seen;
      EXPECT_GE(e["seconds_inside"].get<double>(), 2.0) << e.dump();
      seen += 'O';
      ++loiters;
    } else {
      ASSERT_EQ(type, "leave") << e.dump();
      EXPECT_TRUE(!seen.empty() && seen.back() != 'L') << e.dump() << ": no visit open";
      seen += 'L';
    }
  }
  for (const auto& [key, seen] : visits) {
    EXPECT_EQ(seen.back(), 'L') << key.first << " track " << key.second << ": " << seen;
  }
  EXPECT_GE(enters["left"], 2) << vigil.log();
  EXPECT_GE(enters["right"], 2) << vigil.log();
  EXPECT_GE(loiters, 1) << "persons stay in the left half for more than 2 s\n" << vigil.log();

  // Loitering: ON while a track that loitered is inside, OFF (retained) once they have left.
  auto loitering = testing::payloadsOn(received, "vigil/test/square/left/loitering");
  ASSERT_FALSE(loitering.empty());
  EXPECT_EQ(loitering.front(), "OFF");
  EXPECT_NE(std::find(loitering.begin(), loitering.end(), "ON"), loitering.end());
  EXPECT_EQ(loitering.back(), "OFF");
  EXPECT_EQ(testing::retainedNow(broker.url(), "vigil/test/square/left/loitering"), "OFF");
  EXPECT_FALSE(testing::payloadsOn(received,
                                   "homeassistant/binary_sensor/test/"
                                   "square_left_loitering/config")
                   .empty());

  // Presence events count the tracked persons and name them.
  int named = 0;
  for (const json& e : parsed(testing::payloadsOn(received, "vigil/test/events"))) {
    if (e["type"] == "end") continue;
    EXPECT_EQ(e["persons"].size(), e["boxes"].size()) << e.dump();
    EXPECT_EQ(e["count"].get<std::size_t>(), e["persons"].size()) << e.dump();
    for (const json& p : e["persons"]) {
      EXPECT_TRUE(recordedIds.contains(p["id"].get<std::uint64_t>())) << p.dump();
      EXPECT_TRUE(p.contains("first_seen") && p.contains("stationary")) << p.dump();
      ++named;
    }
  }
  EXPECT_GT(named, 0) << vigil.log();
}

}  // namespace
}  // namespace vigil
