// `vigil run` observed from outside: /metrics checked by the real promtool and scraped by a real
// Prometheus server, health, readiness, the status API, the latest frame, and the HTTP server
// under abuse while the daemon keeps detecting.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>
#include <regex>
#include <thread>

#include "tests/free_port.h"
#include "tests/headless_chromium.h"
#include "tests/http_get.h"
#include "tests/model_paths.h"
#include "tests/process.h"
#include "tests/prometheus_server.h"
#include "tests/promtool.h"
#include "tests/temp_dir.h"
#include "tests/vigil_daemon.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::ChildProcess;
using testing::httpGet;
using testing::kChromium;

std::filesystem::path campusClip() { return testing::videosDir() / "TUD-Campus.mp4"; }

#define VIGIL_REQUIRE_CLIP()                                                                     \
  do {                                                                                           \
    VIGIL_REQUIRE_MODEL();                                                                       \
    if (!std::filesystem::exists(campusClip())) GTEST_SKIP() << "clip absent: " << campusClip(); \
  } while (0)

// A running daemon with one looping clip camera and HTTP on an ephemeral loopback port.
class RunningDaemon : public testing::VigilDaemon {
 public:
  explicit RunningDaemon(const TempDir& dir)
      : VigilDaemon(dir.path(), "version: 1\ndetector:\n  model: " + testing::modelDir().string() +
                                    "\nhttp:\n  listen: 127.0.0.1:0\ncameras:\n"
                                    "  - {name: campus, source: 'file:" +
                                    campusClip().string() + "', loop: true, detect_fps: 4}\n") {}

  bool waitDetected(std::uint64_t after) { return VigilDaemon::waitDetected("campus", after); }
  std::uint64_t detected() { return VigilDaemon::detected("campus"); }
};

TEST(ObservabilityTest, EndpointsAnswerAndPromtoolAcceptsTheMetrics) {
  VIGIL_REQUIRE_CLIP();
  TempDir dir;
  RunningDaemon vigil(dir);
  ASSERT_NE(vigil.port(), 0) << vigil.process().log();
  ASSERT_TRUE(vigil.waitDetected(0)) << vigil.process().log();

  auto metrics = httpGet(vigil.port(), "/metrics");
  ASSERT_TRUE(metrics.has_value());
  EXPECT_EQ(metrics->status, 200);
  EXPECT_NE(metrics->headers.find("text/plain; version=0.0.4"), std::string::npos);
  for (const std::string& series : std::vector<std::string>{
           "vigil_camera_frames_captured_total{camera=\"campus\"}",
           "vigil_camera_frames_detected_total{camera=\"campus\"}",
           "vigil_camera_up{camera=\"campus\"} 1",
           "vigil_backend_info{backend=\"" + testing::autoCpuBackend() + "\"",
           "vigil_stage_duration_seconds_bucket{stage=\"inference\"",
           "vigil_capture_to_publish_seconds_count{camera=\"campus\"}",
           "vigil_build_info{version=",
           "process_resident_memory_bytes",
           "vigil_heap_in_use_bytes ",
           "vigil_heap_free_bytes ",
           "vigil_person_present{camera=\"campus\"}",
           "vigil_camera_frames_gated_total{camera=\"campus\"} 0",
           "vigil_camera_frames_motion_checked_total{camera=\"campus\"} ",
           "vigil_camera_frames_decoded_total{camera=\"campus\"}",
           "vigil_camera_capture_cpu_seconds_total{camera=\"campus\"}",
           "vigil_camera_motion_state{camera=\"campus\",state=\"off\"} 0",
           "vigil_camera_motion_state{camera=\"campus\",state=\"idle\"} 0",
           "vigil_camera_gated_detector_seconds_estimate_total{camera=\"campus\"} 0",
           "vigil_backend_fallback_total{reason=\"canary_failed\"} 0",
           "vigil_backend_fallback_total{reason=\"run_failed\"} 0",
           "vigil_tracks_active{camera=\"campus\"}",
           "vigil_tracks_started_total{camera=\"campus\"}",
           "vigil_track_duration_seconds_count{camera=\"campus\"}",
           "vigil_zone_events_published_total 0",
           "vigil_detector_busy_seconds_total ",
           "vigil_node_info{node=\""}) {
    EXPECT_NE(metrics->body.find(series), std::string::npos) << series << "\n" << metrics->body;
  }
  EXPECT_EQ(metrics->body.find("vigil_npu_power_watts "), std::string::npos)
      << "no NPU here: the series is absent, not 0";

  // The camera's facts; the resolution follows the first frame within a presence tick.
  const std::regex info(
      R"(vigil_camera_info\{camera="campus",source="file",resolution="[0-9]+x[0-9]+",)"
      R"(fps="",detect_fps="[0-9.]+"\} 1)");
  std::string withInfo;
  EXPECT_TRUE(testing::waitUntil([&] {
    auto reply = httpGet(vigil.port(), "/metrics");
    withInfo = reply ? reply->body : "";
    return std::regex_search(withInfo, info);
  })) << withInfo;

  testing::expectPromtoolAccepts(metrics->body, dir.path());
  const std::string log = vigil.process().log();
  std::size_t powerLines = 0;
  for (auto at = log.find("power sources:"); at != std::string::npos;
       at = log.find("power sources:", at + 1)) {
    ++powerLines;
  }
  EXPECT_EQ(powerLines, 1U) << "the power sources are logged once at start\n" << log;

  auto health = httpGet(vigil.port(), "/healthz");
  ASSERT_TRUE(health.has_value());
  EXPECT_EQ(health->status, 200) << health->body;
  auto ready = httpGet(vigil.port(), "/readyz");
  ASSERT_TRUE(ready.has_value());
  EXPECT_EQ(ready->status, 200) << ready->body;
  EXPECT_NE(ready->body.find("[cam=campus] started"), std::string::npos) << ready->body;

  json s = vigil.status();
  EXPECT_EQ(s["backend"]["name"], testing::autoCpuBackend());
  EXPECT_EQ(s["backend"]["reason"], "auto: the preferred backend of this build");
  EXPECT_EQ(s["backend"]["configured"], "auto") << "the default";
  EXPECT_TRUE(s["backend"]["last_fallback_reason"].is_null());
  EXPECT_EQ(s["cameras"][0]["name"], "campus");
  EXPECT_EQ(s["cameras"][0]["state"], "streaming");
  // No motion section: gating on; the crowded campus clip moves all the time, so never idle.
  EXPECT_EQ(s["cameras"][0]["motion"]["enabled"], true) << "on by default";
  EXPECT_NE(s["cameras"][0]["motion"]["state"], "off");
  EXPECT_EQ(s["cameras"][0]["frames"]["gated"], 0);
  // Decoded on demand: the detected frames (each once, whoever else looked), not every one read;
  // with gating on, also the motion check's pictures (at most one per detect period), which need
  // not be the ones the detector takes from the slot. Read at one moment, one frame may be in
  // the detector and one in the motion check, decoded but not yet counted as either.
  const json& frames = s["cameras"][0]["frames"];
  EXPECT_GT(frames["motion_checked"].get<int>(), 0) << frames.dump();
  EXPECT_GE(frames["decoded"].get<int>(), frames["detected"].get<int>()) << frames.dump();
  EXPECT_LE(frames["decoded"].get<int>(),
            frames["detected"].get<int>() + frames["motion_checked"].get<int>() + 2)
      << frames.dump();
  EXPECT_LT(frames["decoded"].get<int>(), frames["captured"].get<int>()) << frames.dump();
  EXPECT_GT(s["cameras"][0]["capture_cpu_seconds"].get<double>(), 0) << s["cameras"][0].dump();
  EXPECT_TRUE(s["cameras"][0]["tracks"].is_array()) << "tracking is on by default";
  EXPECT_TRUE(s["mqtt"].is_null());

  auto jpeg = httpGet(vigil.port(), "/api/cameras/campus/latest.jpg");
  ASSERT_TRUE(jpeg.has_value());
  EXPECT_EQ(jpeg->status, 200);
  cv::Mat image = cv::imdecode(std::vector<unsigned char>(jpeg->body.begin(), jpeg->body.end()),
                               cv::IMREAD_COLOR);
  EXPECT_FALSE(image.empty()) << "latest.jpg is not a JPEG";
  EXPECT_EQ(httpGet(vigil.port(), "/api/cameras/garage/latest.jpg")->status, 404);

  auto page = httpGet(vigil.port(), "/");
  ASSERT_TRUE(page.has_value());
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("<title>Vigil</title>"), std::string::npos);
  EXPECT_NE(page->body.find("api/status"), std::string::npos);

  EXPECT_TRUE(vigil.stop().status.has_value());
}

TEST(ObservabilityTest, RealPrometheusScrapesVigil) {
  VIGIL_REQUIRE_CLIP();
  VIGIL_REQUIRE_PROMETHEUS();
  TempDir dir;
  RunningDaemon vigil(dir);
  ASSERT_NE(vigil.port(), 0) << vigil.process().log();
  testing::PrometheusServer prometheus;
  ASSERT_TRUE(prometheus.start(dir.path(),
                               "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                               "scrape_configs:\n  - job_name: vigil\n    static_configs:\n"
                               "      - targets: ['127.0.0.1:" +
                                   std::to_string(vigil.port()) + "']\n"));
  json result;
  const bool up = testing::waitUntil(
      [&] {
        result = prometheus.query("up{job=\"vigil\"}");
        return !result.empty() && result[0]["value"][1] == "1";
      },
      testing::kDeadline, 500ms);
  ASSERT_TRUE(up) << result.dump() << "\n" << prometheus.log();
  json captured;
  testing::waitUntil(
      [&] {
        captured = prometheus.query("vigil_camera_frames_captured_total");
        return !captured.empty();
      },
      testing::kDeadline, 500ms);
  ASSERT_FALSE(captured.empty()) << captured.dump();
  EXPECT_EQ(captured[0]["metric"]["camera"], "campus");
  EXPECT_TRUE(prometheus.process().stop(SIGTERM).status.has_value());
  EXPECT_TRUE(vigil.stop().status.has_value());
}

TEST(ObservabilityTest, AbusiveClientsDoNotStopDetectionOrHealth) {
  VIGIL_REQUIRE_CLIP();
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  if (limit.rlim_cur < 2048) {
    limit.rlim_cur = std::min<rlim_t>(4096, limit.rlim_max);
    setrlimit(RLIMIT_NOFILE, &limit);
  }
  TempDir dir;
  RunningDaemon vigil(dir);
  ASSERT_NE(vigil.port(), 0) << vigil.process().log();
  ASSERT_TRUE(vigil.waitDetected(0)) << vigil.process().log();

  auto garbage = testing::rawExchange(vigil.port(), "BLAH\r\n\r\n");
  ASSERT_TRUE(garbage.has_value());
  EXPECT_EQ(garbage->status, 400);
  auto huge = testing::rawExchange(
      vigil.port(), "GET /metrics HTTP/1.1\r\nX-Big: " + std::string(64 * 1024, 'a') + "\r\n\r\n");
  ASSERT_TRUE(huge.has_value()) << "no answer to a 64 KiB header";
  EXPECT_EQ(huge->status, 431);

  // A crowd held open while health, metrics and detection are asked of the daemon: 300 idle
  // connections and 50 that trickle a request header a byte at a time (slow loris), more than
  // the server's 256. Every /healthz and /metrics must answer 200 within 2 s all the while, and
  // detection must go on.
  std::vector<int> idle;
  for (int i = 0; i < 300; ++i) {
    int fd = testing::connectLoopback(vigil.port());
    if (fd >= 0) idle.push_back(fd);
  }
  EXPECT_GE(idle.size(), 290U);
  std::vector<int> trickling;
  for (int i = 0; i < 50; ++i) {
    int fd = testing::connectLoopback(vigil.port());
    if (fd >= 0) trickling.push_back(fd);
  }
  std::atomic<bool> crowdLeaves{false};
  std::thread trickle([&] {
    const std::string header = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ";
    for (std::size_t sent = 0; !crowdLeaves; ++sent) {
      for (int fd : trickling) {
        const char byte = sent < header.size() ? header[sent] : 'a';
        (void)::send(fd, &byte, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      }
      // One byte every 200 ms, until the crowd is told to leave.
      testing::waitUntil([&] { return crowdLeaves.load(); }, 200ms);
    }
  });
  // An ASSERT below returns early: the trickler must still be stopped and joined.
  struct StopTrickle {
    std::atomic<bool>& leaves;
    std::thread& thread;
    ~StopTrickle() {
      leaves = true;
      if (thread.joinable()) thread.join();
    }
  } stopTrickle{crowdLeaves, trickle};
  const auto before = vigil.detected();
  std::vector<double> slowest;
  for (int round = 0; round < 10; ++round) {
    for (const char* target : {"/healthz", "/metrics"}) {
      const auto asked = std::chrono::steady_clock::now();
      auto reply = httpGet(vigil.port(), target);
      const auto took = std::chrono::steady_clock::now() - asked;
      ASSERT_TRUE(reply.has_value()) << target << " did not answer under the crowd";
      EXPECT_EQ(reply->status, 200) << target << ": " << reply->body;
      EXPECT_WITHIN(took, 2s);
      slowest.push_back(std::chrono::duration<double>(took).count());
    }
  }
  EXPECT_TRUE(testing::waitUntil([&] { return vigil.detected() >= before + 8; }))
      << "detection stalled under the crowd";
  crowdLeaves = true;
  trickle.join();
  for (int fd : idle) close(fd);
  for (int fd : trickling) close(fd);
  std::printf("under a crowd of %zu idle and %zu trickling connections: slowest answer %.3f s\n",
              idle.size(), trickling.size(), *std::max_element(slowest.begin(), slowest.end()));
  auto metrics = httpGet(vigil.port(), "/metrics");
  ASSERT_TRUE(metrics.has_value());
  EXPECT_NE(metrics->body.find("vigil_http_bad_requests_total"), std::string::npos);
  EXPECT_EQ(metrics->body.find("vigil_http_connections_evicted_total 0\n"), std::string::npos)
      << "the crowd was made room for";
  auto [rc, took] = vigil.stop();
  ASSERT_TRUE(rc.has_value());
  EXPECT_EQ(*rc, 0) << vigil.log();
}

TEST(ObservabilityTest, StatusPageInHeadlessChromiumShowsLiveCamerasZonesAndEvents) {
  VIGIL_REQUIRE_CLIP();
  if (access(kChromium, X_OK) != 0) GTEST_SKIP() << "chromium is not installed";
  TempDir dir;
  testing::VigilDaemon vigil(
      dir.path(),
      "version: 1\ndetector:\n  model: " + testing::modelDir().string() +
          "\nhttp:\n  listen: 127.0.0.1:0\ncameras:\n"
          "  - name: campus\n    source: 'file:" +
          campusClip().string() +
          "'\n    loop: true\n    detect_fps: 4\n"
          "    zones: [{name: walkway, polygon: [[0, 0.5], [1, 0.5], [1, 1], [0, 1]]}]\n"
          "    masks: [[[0, 0], [0.2, 0], [0.2, 0.2], [0, 0.2]]]\n"
          "    lines: [{name: path, points: [[0, 0.7], [1, 0.7]], names: {in: down, out: up}}]\n"
          // A camera that never answers: its tile says so instead of a broken image.
          "  - name: gate\n    source: rtsp://127.0.0.1:" +
          std::to_string(testing::freeLoopbackPort()) + "/live\n");
  ASSERT_NE(vigil.port(), 0) << vigil.log();
  ASSERT_TRUE(vigil.waitDetected("campus", 0)) << vigil.log();
  // A tracked person and an event with its snapshot to show.
  ASSERT_TRUE(vigil.waitForStatus([](const json& s) { return !s["cameras"][0]["tracks"].empty(); }))
      << vigil.log();
  json events;
  ASSERT_TRUE(testing::waitUntil([&] {
    auto reply = httpGet(vigil.port(), "/api/events");
    events = reply ? json::parse(reply->body, nullptr, false) : json();
    return events.is_array() && !events.empty() && events.back()["snapshot"].is_string();
  })) << events.dump();
  const std::string snapshot = events.back()["snapshot"];
  auto jpeg = httpGet(vigil.port(), "/" + snapshot);
  ASSERT_TRUE(jpeg.has_value());
  EXPECT_EQ(jpeg->status, 200);
  EXPECT_EQ(jpeg->headers.find("image/jpeg") != std::string::npos, true);
  const std::string url = "http://127.0.0.1:" + std::to_string(vigil.port()) + "/";
  auto metrics = httpGet(vigil.port(), "/metrics");
  ASSERT_TRUE(metrics.has_value());
  EXPECT_NE(metrics->body.find("vigil_zone_person_present{camera=\"campus\",zone=\"walkway\"}"),
            std::string::npos)
      << metrics->body;
  EXPECT_NE(metrics->body.find("vigil_zone_persons{camera=\"campus\",zone=\"walkway\"}"),
            std::string::npos);

  const std::string dom = testing::renderedPage(dir.path(), url, 1280);
  // The tile is built by the page's script from /api/status, so it proves the whole loop.
  EXPECT_NE(dom.find("data-camera=\"campus\""), std::string::npos) << dom;
  EXPECT_NE(dom.find("<span data-k=\"state\">streaming"), std::string::npos) << dom;
  EXPECT_NE(dom.find("<span data-k=\"tracks\">#"), std::string::npos) << "track ids\n" << dom;
  // The frames row: the camera's counts as its counters report them (CameraCounters::report).
  EXPECT_TRUE(std::regex_search(dom, std::regex("<span data-k=\"frames\">captured [1-9][0-9]*, "
                                                "[^<]*detected [1-9]")))
      << dom;
  EXPECT_NE(dom.find(testing::autoCpuBackend() == "cpu" ? "OpenCV DNN" : "ONNX Runtime"),
            std::string::npos)
      << "the backend's device is shown";
  // The live picture kept coming: the page counts the frames it received.
  std::smatch frames;
  ASSERT_TRUE(std::regex_search(dom, frames, std::regex("data-frames=\"(\\d+)\"")));
  EXPECT_GE(std::stoi(frames[1]), 3) << "frames received in 5 s at 4 a second";
  EXPECT_NE(dom.find("api/cameras/campus/latest.jpg"), std::string::npos) << dom;
  // Zones and masks are drawn over it; the gating state is explained.
  EXPECT_NE(dom.find("data-zone=\"walkway\""), std::string::npos) << dom;
  EXPECT_NE(dom.find("class=\"mask\""), std::string::npos) << dom;
  // The counting line, in fractions as the zones, with an arrow to its `in` side: drawn left to
  // right at 70 % of the height, `in` is down the picture.
  EXPECT_NE(dom.find("points=\"0,70 100,70\" class=\"line\" data-line=\"path\""), std::string::npos)
      << dom;
  EXPECT_NE(dom.find("points=\"50,70 50,76 "), std::string::npos) << "the arrow points down\n"
                                                                  << dom;
  EXPECT_NE(dom.find("data-direction=\"down\""), std::string::npos) << dom;
  // Gating on by default; the crowded clip keeps the full rate, and the page says why.
  EXPECT_TRUE(std::regex_search(
      dom, std::regex("<span data-k=\"gating\">(motion|person present): full rate")))
      << dom;
  // The recent events, with the snapshot of the best frame.
  EXPECT_NE(dom.find("data-event=\"" + events.back()["id"].get<std::string>() + "\""),
            std::string::npos)
      << dom;
  EXPECT_NE(dom.find("src=\"" + url + snapshot + "\""), std::string::npos) << dom;
  // The camera that is down: its tile is marked and says why, with no image element showing.
  const auto gateAt = dom.find("<section class=\"camera down\" data-camera=\"gate\"");
  ASSERT_NE(gateAt, std::string::npos) << dom;
  const std::string gate = dom.substr(gateAt, dom.find("</section>", gateAt) - gateAt);
  EXPECT_NE(gate.find("<div class=\"placeholder\">camera down: "), std::string::npos) << gate;
  EXPECT_NE(gate.find("Connection refused"), std::string::npos) << gate;
  EXPECT_TRUE(
      std::regex_search(gate, std::regex("<span data-k=\"frames\">[^<]*open failures [1-9]")))
      << gate;
  // Usable on a phone: nothing wider than 390 px.
  const std::string narrow = testing::renderedPage(dir.path(), url, 390);
  EXPECT_NE(narrow.find("data-fits=\"true\""), std::string::npos) << narrow;

  auto shotArgs = testing::chromium(dir.path(), "profile-shot");
  const auto png = dir.path() / "status-page.png";
  shotArgs.insert(shotArgs.end(), {"--screenshot=" + png.string(), url});
  ChildProcess shot(shotArgs, dir.path() / "screenshot.log");
  ASSERT_TRUE(shot.wait().has_value());
  cv::Mat image = cv::imread(png.string());
  ASSERT_FALSE(image.empty()) << shot.log();
  EXPECT_EQ(image.cols, 1280);
  testing::keepScreenshot(png);  // build/tests/status-page.png
  EXPECT_TRUE(vigil.stop().status.has_value());
}

}  // namespace
}  // namespace vigil
