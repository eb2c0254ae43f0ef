// What `vigil run` says when it stops (run_summary), on its own: one log line per camera, the
// --summary-json document with every camera's figures and its person events, the MQTT figures
// only with MQTT, and a summary path checked at the start (created empty) or said unwritable.
#include "daemon/service/run_summary.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "daemon/capture/camera/camera_counters.h"
#include "daemon/capture/camera/camera_status.h"
#include "tests/log_capture.h"
#include "tests/temp_dir.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// A result path whose "door" kept the start of one presence event (two frames with a person, the
// first of them frame 41), and "yard" that is not running.
class SummaryRig {
 public:
  SummaryRig() : publisher({}, nullptr), results(publisher, stagesOf(), 0.5F) {
    results.keepEventStarts(true);
    PresenceSettings presence;
    presence.minFrames = 2;
    publisher.setCameras({PublishedCamera{"door", presence, {}, {}, {}}});
    results.addCamera("door", std::make_shared<CameraChannel>("door", 5.0),
                      {registry.histogram("summary_c2p", "c", {"camera"}).labels({"door"}),
                       registry.histogram("summary_track", "t", {"camera"}).labels({"door"})},
                      nullptr);
    for (std::uint64_t sequence : {41, 42}) {
      FrameResult r;
      r.camera = "door";
      r.sequence = sequence;
      r.width = 640;
      r.height = 480;
      r.captureTime = r.startTime = r.doneTime = SteadyClock::now();
      r.detections = {Detection{Box{100, 100, 80, 200}, 0.9F, 0}};
      r.backend = "cpu";
      results.onResult(r);
    }
  }

  ResultPath::StageHistogramsFor stagesOf() {
    HistogramFamily* f = &registry.histogram("summary_stages", "s", {"stage", "backend"});
    return [f](const std::string& b) -> ResultPath::StageHistograms {
      return {f->labels({"a", b}), f->labels({"b", b}), f->labels({"c", b}), f->labels({"d", b}),
              f->labels({"e", b})};
    };
  }

  static DaemonSnapshot snapshot() {
    DaemonSnapshot s;
    s.detectionFailures = 3;
    s.eventsPublished = 5;
    CameraSnapshot door;
    door.name = "door";
    door.state = cameraStateName(CameraState::kStreaming);
    CameraCounters counters;  // the figures as the camera's counters report them
    counters.captured = 600;
    counters.detected = 150;
    counters.skipped = 4;
    counters.dropped = 2;
    counters.gated = 100;
    counters.decoding->frames = 250;
    counters.decodeErrors = 1;
    counters.lost = 7;
    counters.reconnects = 1;
    counters.report(door.frames);
    door.captureCpuSeconds = 12.5;
    door.gatedSeconds = 4.25;
    door.latencyMs = {80, 240, 150};
    CameraSnapshot yard;
    yard.name = "yard";
    yard.state = cameraStateName(CameraState::kReconnecting);
    s.cameras = {door, yard};
    return s;
  }

  Registry registry;
  EventPublisher publisher;
  ResultPath results;
};

json readJson(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

TEST(RunSummaryTest, EachCameraIsOneLineOfTheLog) {
  setLogLevel(spdlog::level::info);
  SummaryRig rig;
  testing::LogCapture log("daemon");
  writeRunSummary({}, SummaryRig::snapshot(), rig.results, RunTotals{60, 9});
  EXPECT_EQ(
      log.text(),
      "[cam=door] 600 captured, 150 detected (2.50/s), 4 skipped, 2 dropped, 100 gated, 250 "
      "decoded, 1 decode errors, 7 lost, 1 reconnects, capture CPU 12.5 s, latency p50 80 ms "
      "p99 240 ms\n"
      "[cam=yard] 0 captured, 0 detected (0.00/s), 0 skipped, 0 dropped, 0 gated, 0 decoded, "
      "0 decode errors, 0 lost, 0 reconnects, capture CPU 0.0 s, latency p50 0 ms p99 0 ms\n");
}

TEST(RunSummaryTest, TheDocumentHasTheRunsAndEveryCamerasFigures) {
  TempDir dir;
  SummaryRig rig;
  const auto file = dir.path() / "summary.json";
  writeRunSummary(file, SummaryRig::snapshot(), rig.results, RunTotals{60, 9});
  const json summary = readJson(file);
  EXPECT_EQ(summary["seconds"], 60);
  EXPECT_EQ(summary["cpu_seconds"], 9);
  EXPECT_EQ(summary["detection_failures"], 3);
  EXPECT_EQ(summary["events_published"], 5);
  EXPECT_FALSE(summary.contains("mqtt")) << "no MQTT";
  const json& door = summary["cameras"]["door"];
  EXPECT_EQ(door["captured"], 600);
  EXPECT_EQ(door["detected"], 150);
  EXPECT_EQ(door["gated"], 100);
  EXPECT_EQ(door["lost"], 7);
  EXPECT_EQ(door["state"], "streaming");
  EXPECT_EQ(door["capture_cpu_seconds"], 12.5);
  EXPECT_EQ(door["gated_detector_seconds_estimate"], 4.25);
  EXPECT_EQ(door["latency_ms"], (json{{"p50", 80}, {"p99", 240}, {"samples", 150}}));
  ASSERT_EQ(door["person_events"].size(), 1U) << door.dump();
  EXPECT_EQ(door["person_events"][0]["start_frame"], 41) << "the first frame of the streak";
  EXPECT_TRUE(door["person_events"][0]["start"].get<std::string>().ends_with("Z"));
  const json& yard = summary["cameras"]["yard"];
  EXPECT_EQ(yard["state"], "reconnecting");
  EXPECT_EQ(yard["person_events"], json::array()) << "not running: no view, no events";
}

TEST(RunSummaryTest, WithMqttTheDocumentHasItsFigures) {
  TempDir dir;
  SummaryRig rig;
  DaemonSnapshot s = SummaryRig::snapshot();
  s.mqtt = MqttSnapshot{"mqtt://broker:1883", true, 40, 2, 1, 3, ""};
  writeRunSummary(dir.path() / "summary.json", s, rig.results, RunTotals{60, 9});
  EXPECT_EQ(readJson(dir.path() / "summary.json")["mqtt"],
            (json{{"published", 40}, {"dropped", 2}, {"buffered", 1}, {"reconnects", 3}}));
}

TEST(RunSummaryTest, ASummaryThatCannotBeWrittenIsSaidAndTheStopGoesOn) {
  TempDir dir;
  SummaryRig rig;
  const auto file = dir.path() / "missing" / "summary.json";
  testing::LogCapture log("daemon");
  writeRunSummary(file, SummaryRig::snapshot(), rig.results, RunTotals{60, 9});
  EXPECT_NE(log.text().find("--summary-json " + file.string() +
                            ": cannot write the summary: No such file or directory"),
            std::string::npos)
      << log.text();
}

TEST(RunSummaryTest, TheSummaryPathIsCheckedAtTheStartAndCreatedEmpty) {
  TempDir dir;
  EXPECT_TRUE(summaryIsWritable({})) << "no summary asked for";
  const auto file = dir.path() / "summary.json";
  EXPECT_TRUE(summaryIsWritable(file));
  EXPECT_TRUE(std::filesystem::exists(file));
  EXPECT_EQ(std::filesystem::file_size(file), 0U);

  testing::LogCapture log("daemon");
  const auto nowhere = dir.path() / "missing" / "summary.json";
  EXPECT_FALSE(summaryIsWritable(nowhere));
  EXPECT_EQ(log.text(), "--summary-json " + nowhere.string() +
                            ": cannot write there: No such file or directory\n");
}

}  // namespace
}  // namespace vigil
