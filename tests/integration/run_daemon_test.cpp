// `vigil run` as a user runs it: the real binary, real clips replayed as cameras, broken
// sources next to good ones, and the signals systemd sends.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <thread>
#include <vector>

#include "detector/backend.h"
#include "tests/free_port.h"
#include "tests/model_paths.h"
#include "tests/notify_socket.h"
#include "tests/occurrences.h"
#include "tests/process.h"
#include "tests/temp_dir.h"
#include "tests/vigil_daemon.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;
using testing::ChildProcess;
using testing::kDeadline;
using testing::modelDir;
using testing::NotifySocket;
using testing::videosDir;
using testing::VigilDaemon;

std::string videoFile(const char* name) { return (videosDir() / name).string(); }

#define VIGIL_REQUIRE_CLIPS()                                  \
  do {                                                         \
    VIGIL_REQUIRE_MODEL();                                     \
    if (!std::filesystem::exists(videoFile("TUD-Campus.mp4"))) \
      GTEST_SKIP() << "clips absent: " << videosDir();         \
  } while (0)

// The status API on a port of the kernel's choosing (never the default 9842, which another
// test running beside this one would take too): the tests wait on what it reports.
std::string header() {
  return "version: 1\ndetector:\n  model: " + modelDir().string() +
         "\n  min_score: 0.4\nhttp: {listen: '127.0.0.1:0'}\n";
}

// Every camera named has detected at least `frames` frames.
std::function<bool(const nlohmann::json&)> detectedAtLeast(std::vector<std::string> cameras,
                                                           std::uint64_t frames) {
  return [cameras = std::move(cameras), frames](const nlohmann::json& status) {
    for (const auto& name : cameras) {
      bool done = false;
      for (const auto& c : status["cameras"]) {
        if (c["name"] == name) done = c["frames"]["detected"].get<std::uint64_t>() >= frames;
      }
      if (!done) return false;
    }
    return true;
  };
}

nlohmann::json readJson(const std::filesystem::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

TEST(RunDaemonTest, ClipsReplayedAsCamerasFindPersons) {
  VIGIL_REQUIRE_CLIPS();
  TempDir dir;
  VigilDaemon vigil(dir.path(),
                    header() + "cameras:\n" + "  - {name: campus, source: 'file:" +
                        videoFile("TUD-Campus.mp4") + "', loop: true, detect_fps: 3}\n" +
                        "  - {name: street, source: 'file:" + videoFile("TUD-Stadtmitte.mp4") +
                        "', loop: true, detect_fps: 3}\n",
                    {"--summary-json", (dir.path() / "summary.json").string()});
  ASSERT_NE(vigil.port(), 0) << vigil.log();
  ASSERT_TRUE(vigil.waitForStatus(detectedAtLeast({"campus", "street"}, 10))) << vigil.log();
  ASSERT_TRUE(vigil.process().waitForLog("] person present (")) << vigil.log();
  auto stopped = vigil.stop();
  ASSERT_TRUE(stopped.status.has_value()) << vigil.log();
  EXPECT_EQ(*stopped.status, 0) << vigil.log();
  auto summary = readJson(dir.path() / "summary.json");
  for (const char* cam : {"campus", "street"}) {
    const auto& c = summary["cameras"][cam];
    EXPECT_GE(c["detected"].get<int>(), 10) << cam << ": " << summary.dump();
    EXPECT_GT(c["captured"].get<int>(), c["detected"].get<int>()) << cam;
    EXPECT_EQ(c["reconnects"], 0) << cam;
    EXPECT_GT(c["latency_ms"]["p50"].get<double>(), 0) << cam;
    EXPECT_NE(vigil.log().find(std::string("[cam=") + cam + "] "), std::string::npos);
  }
}

TEST(RunDaemonTest, BrokenSourcesRetryAndNeverStallTheGoodCamera) {
  VIGIL_REQUIRE_CLIPS();
  TempDir dir;
  std::ofstream(dir.path() / "corrupt.mp4") << std::string(100000, '\x42');
  VigilDaemon vigil(dir.path(),
                    header() + "cameras:\n" + "  - {name: good, source: 'file:" +
                        videoFile("TUD-Campus.mp4") + "', loop: true, detect_fps: 4}\n" +
                        "  - {name: missing, source: /dev/video-does-not-exist}\n"
                        "  - {name: notcapture, source: /dev/null}\n"
                        "  - {name: refused, source: 'rtsp://127.0.0.1:9/stream'}\n"
                        "  - {name: corrupt, source: 'file:corrupt.mp4', loop: true}\n",
                    {"--summary-json", (dir.path() / "summary.json").string()});
  ASSERT_NE(vigil.port(), 0) << vigil.log();
  const std::vector<std::string> broken = {"missing", "notcapture", "refused", "corrupt"};
  for (const auto& cam : broken) {
    EXPECT_TRUE(
        vigil.process().waitForLog("[cam=" + cam + "] source lost, reconnecting with backoff"))
        << cam << "\n"
        << vigil.log();
  }
  // The good camera detects all along: 20 frames while the others keep failing.
  ASSERT_TRUE(vigil.waitForStatus(detectedAtLeast({"good"}, 20))) << vigil.log();
  auto stopped = vigil.stop();
  ASSERT_TRUE(stopped.status.has_value()) << vigil.log();
  EXPECT_EQ(*stopped.status, 0) << vigil.log();
  std::string log = vigil.log();
  auto summary = readJson(dir.path() / "summary.json");
  EXPECT_GE(summary["cameras"]["good"]["detected"].get<int>(), 20) << log;
  for (const auto& cam : broken) {
    EXPECT_EQ(summary["cameras"][cam]["state"], "reconnecting") << cam;
    EXPECT_EQ(summary["cameras"][cam]["captured"], 0) << cam;
  }
  EXPECT_NE(log.find("not a video capture device"), std::string::npos) << log;
  // Logged once per state change, not once per attempt.
  EXPECT_EQ(testing::occurrences(log, "[cam=refused] source lost"), 1U) << log;
}

// An MJPEG-over-HTTP camera whose network goes quiet: every connection gets `frames` JPEGs at
// 20 fps, then nothing, and the connection stays open (no FIN, no RST) until the server is
// destroyed, as when a camera hangs or a link drops silently.
class StallingMjpegServer {
 public:
  explicit StallingMjpegServer(int frames) : frames_(frames) {
    cv::Mat picture(240, 320, CV_8UC3, cv::Scalar(40, 90, 160));
    cv::circle(picture, {160, 120}, 60, cv::Scalar(200, 200, 30), -1);
    cv::imencode(".jpg", picture, jpeg_);
    listen_ = testing::listenOnLoopback(4, port_);
    thread_ = std::thread([this] { serve(); });
  }
  ~StallingMjpegServer() {
    stopping_ = true;
    shutdown(listen_, SHUT_RDWR);  // wakes accept()
    thread_.join();
    close(listen_);
    for (int fd : held_) close(fd);
  }
  StallingMjpegServer(const StallingMjpegServer&) = delete;
  StallingMjpegServer& operator=(const StallingMjpegServer&) = delete;

  int port() const { return port_; }
  // When each connection came in and when its frames ran out.
  struct Connection {
    std::chrono::steady_clock::time_point accepted, stalled;
  };
  std::vector<Connection> connections() const {
    std::lock_guard lock(mutex_);
    return connections_;
  }

 private:
  void serve() {
    while (!stopping_) {
      int fd = accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      Connection c{std::chrono::steady_clock::now(), {}};
      // The request head; its content does not matter.
      std::string request;
      char buffer[4096];
      while (request.find("\r\n\r\n") == std::string::npos) {
        ssize_t n = recv(fd, buffer, sizeof buffer, 0);
        if (n <= 0) break;
        request.append(buffer, static_cast<std::size_t>(n));
      }
      sendAll(fd,
              "HTTP/1.0 200 OK\r\nContent-Type: multipart/x-mixed-replace; boundary=frame\r\n"
              "\r\n");
      for (int i = 0; i < frames_ && !stopping_; ++i) {
        sendAll(fd, "--frame\r\nContent-Type: image/jpeg\r\nContent-Length: " +
                        std::to_string(jpeg_.size()) + "\r\n\r\n" +
                        std::string(jpeg_.begin(), jpeg_.end()) + "\r\n");
        std::this_thread::sleep_for(50ms);
      }
      c.stalled = std::chrono::steady_clock::now();
      std::lock_guard lock(mutex_);
      connections_.push_back(c);
      held_.push_back(fd);
    }
  }
  static void sendAll(int fd, const std::string& data) {
    for (std::size_t sent = 0; sent < data.size();) {
      ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;
      sent += static_cast<std::size_t>(n);
    }
  }

  const int frames_;
  std::vector<std::uint8_t> jpeg_;
  int listen_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;
  std::vector<Connection> connections_;
  std::vector<int> held_;
  std::thread thread_;
};

TEST(RunDaemonTest, AStreamThatStallsMidwayIsRetriedWhileTheOtherCameraDetects) {
  VIGIL_REQUIRE_CLIPS();
  TempDir dir;
  StallingMjpegServer server(40);
  ASSERT_NE(server.port(), 0);
  NotifySocket notify(dir.path() / "notify");
  ASSERT_TRUE(notify.bound());
  setenv("NOTIFY_SOCKET", (dir.path() / "notify").c_str(), 1);
  setenv("WATCHDOG_USEC", "2000000", 1);  // a ping every second while every thread is healthy
  VigilDaemon daemon(
      dir.path(),
      header() + "cameras:\n" + "  - {name: good, source: 'file:" + videoFile("TUD-Campus.mp4") +
          "', loop: true, detect_fps: 4}\n" + "  - {name: stalled, source: 'http://127.0.0.1:" +
          std::to_string(server.port()) + "/mjpeg', detect_fps: 1}\n",
      {"--summary-json", (dir.path() / "summary.json").string()});
  unsetenv("NOTIFY_SOCKET");
  unsetenv("WATCHDOG_USEC");
  ChildProcess& vigil = daemon.process();
  ASSERT_TRUE(notify.waitFor("READY=1", kDeadline)) << vigil.log();
  ASSERT_TRUE(vigil.waitForLog("[cam=stalled] streaming")) << vigil.log();
  ASSERT_TRUE(vigil.waitForLog("[cam=stalled] source lost, reconnecting with backoff"))
      << vigil.log();

  // While it stalls, retries and stalls again, systemd's watchdog keeps being fed. Pings sent
  // before this point are drained first, so that only those of the stalls are counted.
  while (notify.receive(100ms)) {
  }
  std::size_t pings = 0;
  const auto watched = std::chrono::steady_clock::now();
  while (server.connections().size() < 3 &&
         std::chrono::steady_clock::now() - watched < kDeadline) {
    if (auto m = notify.receive(500ms); m && *m == "WATCHDOG=1") ++pings;
  }
  const double watchedSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - watched).count();
  auto connections = server.connections();
  ASSERT_GE(connections.size(), 3U) << vigil.log();
  EXPECT_GE(static_cast<double>(pings), watchedSeconds / 2)
      << pings << " pings in " << watchedSeconds << " s\n"
      << vigil.log();
  // No reconnect storm: each new connection comes after the previous one went quiet and the
  // stall was noticed.
  std::string quiet;  // from a connection going quiet to the next one, for the record
  for (std::size_t i = 1; i < connections.size(); ++i) {
    EXPECT_GT(connections[i].accepted, connections[i - 1].stalled) << "connection " << i;
    const std::chrono::duration<double> gap = connections[i].accepted - connections[i - 1].stalled;
    quiet += fmt::format(" {:.2f}", gap.count());
  }

  // The good camera detects all along: 20 frames while the other stalls and retries.
  ASSERT_TRUE(daemon.waitForStatus(detectedAtLeast({"good"}, 20))) << vigil.log();
  // Stop while the stalled camera sits in a read that gets nothing: a connection is listed once
  // its frames ran out, so the moment a new one is listed, the read has just begun to wait. The
  // stop interrupts it (it no longer waits out FFmpeg's 2 s read timeout).
  const std::size_t listed = server.connections().size();
  ASSERT_TRUE(testing::waitUntil([&] { return server.connections().size() > listed; }))
      << vigil.log();
  auto [status, took] = vigil.stop(SIGTERM);
  ASSERT_TRUE(status.has_value()) << vigil.log();
  EXPECT_EQ(*status, 0) << vigil.log();
  EXPECT_WITHIN(took, 2s);
  std::printf(
      "stalled stream: %zu connections, quiet to the next one (s):%s; %zu watchdog pings "
      "in %.1f s; stopped in %.2f s\n",
      connections.size(), quiet.c_str(), pings, watchedSeconds,
      std::chrono::duration<double>(took).count());

  const std::string log = vigil.log();
  EXPECT_EQ(log.find("withholding the systemd watchdog ping"), std::string::npos) << log;
  EXPECT_NE(log.find("stalled: nothing for 2000 ms"), std::string::npos) << log;
  auto summary = readJson(dir.path() / "summary.json");
  EXPECT_GE(summary["cameras"]["good"]["detected"].get<int>(), 20) << log;
  EXPECT_EQ(summary["cameras"]["good"]["reconnects"], 0) << log;
  EXPECT_GE(summary["cameras"]["stalled"]["captured"].get<int>(), 1) << log;
  EXPECT_GE(summary["cameras"]["stalled"]["reconnects"].get<int>(), 2) << log;
}

TEST(RunDaemonTest, SigtermStopsWithinTwoSeconds) {
  VIGIL_REQUIRE_CLIPS();
  TempDir dir;
  std::ofstream(dir.path() / "cameras.yaml")
      << header() << "cameras:\n"
      << "  - {name: a, source: 'file:" << videoFile("TUD-Campus.mp4") << "', loop: true}\n"
      << "  - {name: b, source: 'rtsp://127.0.0.1:9/x'}\n";
  ChildProcess vigil({VIGIL_BINARY, "run", "--config", (dir.path() / "cameras.yaml").string()},
                     dir.path() / "log");
  ASSERT_TRUE(vigil.waitForLog("[cam=a] streaming")) << vigil.log();
  auto [status, took] = vigil.stop(SIGTERM);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(*status, 0) << vigil.log();
  EXPECT_WITHIN(took, 2s);
  EXPECT_NE(vigil.log().find("signal 15 received, stopping"), std::string::npos);
}

TEST(RunDaemonTest, SighupRejectsABadFileAndRestartsOnlyChangedCameras) {
  VIGIL_REQUIRE_CLIPS();
  TempDir dir;
  auto config = dir.path() / "cameras.yaml";
  auto write = [&](int detectFpsOfB, bool broken) {
    std::ofstream(config) << header() << "cameras:\n"
                          << "  - {name: a, source: 'file:" << videoFile("TUD-Campus.mp4")
                          << "', loop: true, detect_fps: 2}\n"
                          << "  - {name: b, source: 'file:" << videoFile("TUD-Stadtmitte.mp4")
                          << "', loop: true, detect_fps: " << detectFpsOfB << "}\n"
                          << (broken ? "  - {name: c, source: nowhere}\n" : "");
  };
  write(2, false);
  ChildProcess vigil({VIGIL_BINARY, "run", "--config", config.string()}, dir.path() / "log");
  ASSERT_TRUE(vigil.waitForLog("[cam=b] streaming")) << vigil.log();

  write(2, true);
  vigil.signal(SIGHUP);
  ASSERT_TRUE(vigil.waitForLog("reload rejected")) << vigil.log();
  EXPECT_NE(vigil.log().find("cameras[2].source: must be a V4L2 device"), std::string::npos)
      << vigil.log();

  write(1, false);
  vigil.signal(SIGHUP);
  ASSERT_TRUE(
      vigil.waitForLog("reload applied: 1 camera(s) restarted, 0 added, 0 removed, 2 running"))
      << vigil.log();
  auto stopped = vigil.stop(SIGTERM);
  ASSERT_TRUE(stopped.status.has_value());
  EXPECT_EQ(*stopped.status, 0);
  std::string log = vigil.log();
  // Camera a was started once; b twice.
  EXPECT_EQ(testing::occurrences(log, "[cam=a] started"), 1U) << log;
  EXPECT_EQ(testing::occurrences(log, "[cam=b] started"), 2U) << log;
}

// A reload applies a changed log.level, and says so at whichever of the two levels is the more
// verbose: at warn the next reload's info line is not written, back at info it is.
TEST(RunDaemonTest, SighupAppliesAChangedLogLevel) {
  VIGIL_REQUIRE_CLIPS();
  TempDir dir;
  auto config = dir.path() / "cameras.yaml";
  auto write = [&](const std::string& level) {
    std::ofstream(config) << header() << "log: {level: " << level << "}\ncameras:\n"
                          << "  - {name: a, source: 'file:" << videoFile("TUD-Campus.mp4")
                          << "', loop: true, detect_fps: 2}\n";
  };
  write("info");
  ChildProcess vigil({VIGIL_BINARY, "run", "--config", config.string()}, dir.path() / "log");
  ASSERT_TRUE(vigil.waitForLog("[cam=a] streaming")) << vigil.log();

  write("warn");
  vigil.signal(SIGHUP);
  ASSERT_TRUE(vigil.waitForLog("reload: log level warn")) << vigil.log();
  write("info");
  vigil.signal(SIGHUP);
  ASSERT_TRUE(vigil.waitForLog("reload: log level info")) << vigil.log();
  ASSERT_TRUE(vigil.waitForLog("reload applied: 0 camera(s) restarted")) << vigil.log();
  auto stopped = vigil.stop(SIGTERM);
  ASSERT_TRUE(stopped.status.has_value());
  EXPECT_EQ(*stopped.status, 0);
  EXPECT_EQ(testing::occurrences(vigil.log(), "reload applied: "), 1U)
      << "the reload at warn said nothing at info\n"
      << vigil.log();
}

// A reload whose detector section does not load still applies its camera edits, and says
// what it did not apply; a reload changing only min_score (above tracking's low score, which is
// all the detector sees of it) loads no model again.
TEST(RunDaemonTest, SighupAppliesCameraEditsWhenTheDetectorDoesNotLoadAndMinScoreLoadsNothing) {
  VIGIL_REQUIRE_CLIPS();
  TempDir dir;
  auto config = dir.path() / "cameras.yaml";
  auto write = [&](const std::string& model, float minScore, bool withB) {
    std::ofstream(config) << "version: 1\ndetector:\n  model: " << model
                          << "\n  min_score: " << minScore
                          << "\nhttp: {listen: '127.0.0.1:0'}\ncameras:\n"
                          << "  - {name: a, source: 'file:" << videoFile("TUD-Campus.mp4")
                          << "', loop: true, detect_fps: 2}\n"
                          << (withB ? "  - {name: b, source: 'file:" +
                                          videoFile("TUD-Stadtmitte.mp4") +
                                          "', loop: true, detect_fps: 2}\n"
                                    : "");
  };
  write(modelDir().string(), 0.4F, false);
  ChildProcess vigil({VIGIL_BINARY, "run", "--config", config.string()}, dir.path() / "log");
  ASSERT_TRUE(vigil.waitForLog("[cam=a] streaming")) << vigil.log();
  auto count = [&](const std::string& s) { return testing::occurrences(vigil.log(), s); };
  ASSERT_EQ(count("detector: model "), 1U) << vigil.log();

  write(modelDir().string(), 0.6F, false);
  vigil.signal(SIGHUP);
  ASSERT_TRUE(
      vigil.waitForLog("reload applied: 0 camera(s) restarted, 0 added, 0 removed, 1 running"))
      << vigil.log();
  EXPECT_EQ(count("detector: model "), 1U) << "min_score alone loaded the model again\n"
                                           << vigil.log();

  write((dir.path() / "no-such-model").string(), 0.6F, true);
  vigil.signal(SIGHUP);
  ASSERT_TRUE(vigil.waitForLog(
      "reload applied: 0 camera(s) restarted, 1 added, 0 removed, 2 running; the new detector "
      "loads in the background"))
      << vigil.log();
  ASSERT_TRUE(vigil.waitForLog("reload: the new detector does not load (")) << vigil.log();
  EXPECT_NE(vigil.log().find("; the previous one keeps running"), std::string::npos);
  ASSERT_TRUE(vigil.waitForLog("[cam=b] streaming")) << vigil.log();
  auto stopped = vigil.stop(SIGTERM);
  ASSERT_TRUE(stopped.status.has_value());
  EXPECT_EQ(*stopped.status, 0);
}

// The detector section of a reload loads off the control thread: /healthz answers 200 all
// through it (polled from the SIGHUP until the new detector is in use), the rest of the file
// is applied before the load ends, and detection goes on after the swap.
TEST(RunDaemonTest, SighupLoadsTheNewDetectorWhileHealthzAnswersAndDetectionGoesOn) {
  VIGIL_REQUIRE_CLIPS();
  TempDir dir;
  auto write = [&](int threads) {
    return fmt::format(
        "version: 1\ndetector:\n  model: {}\n  backend: {}\n  threads: {}\nhttp: {{listen: "
        "'127.0.0.1:0'}}\ncameras:\n  - {{name: a, source: 'file:{}', loop: true, detect_fps: "
        "5}}\n",
        modelDir().string(), testing::autoCpuBackend(), threads, videoFile("TUD-Campus.mp4"));
  };
  VigilDaemon vigil(dir.path(), write(1));
  ASSERT_NE(vigil.port(), 0) << vigil.log();
  ASSERT_TRUE(vigil.waitDetected("a", 0)) << vigil.log();

  std::ofstream(dir.path() / "cameras.yaml") << write(2);
  std::atomic<bool> loaded{false};
  std::vector<int> answers;  // the status of each /healthz, 0: none within 10 s
  std::chrono::steady_clock::duration slowest{};
  // /healthz every 10 ms until the new detector is in use (or the deadline passes).
  std::thread poller([&] {
    testing::waitUntil(
        [&] {
          const auto start = std::chrono::steady_clock::now();
          auto reply = testing::httpGet(vigil.port(), "/healthz");
          slowest = std::max(slowest, std::chrono::steady_clock::now() - start);
          answers.push_back(reply ? reply->status : 0);
          return loaded.load();
        },
        testing::kDeadline, 10ms);
  });
  vigil.process().signal(SIGHUP);
  loaded = vigil.process().waitForLog("reload: the new detector is in use");
  loaded = true;
  poller.join();
  ASSERT_NE(vigil.log().find("reload: the new detector is in use"), std::string::npos)
      << vigil.log();
  const std::string log = vigil.log();
  EXPECT_LT(log.find("reload applied: 0 camera(s) restarted"),
            log.find("reload: the new detector is in use"))
      << "the rest of the reload waited for the model\n"
      << log;
  ASSERT_FALSE(answers.empty());
  EXPECT_EQ(std::count(answers.begin(), answers.end(), 200),
            static_cast<std::ptrdiff_t>(answers.size()))
      << "a /healthz during the load did not answer 200";
  EXPECT_LT(slowest, 5s) << "a /healthz waited for the model load";
  std::printf("[ reload ] %zu /healthz polls during the load, slowest %.3f s\n", answers.size(),
              std::chrono::duration<double>(slowest).count());
  const std::uint64_t after = vigil.detected("a");
  EXPECT_TRUE(vigil.waitDetected("a", after)) << vigil.log();
  auto stopped = vigil.stop(SIGTERM);
  ASSERT_TRUE(stopped.status.has_value());
  EXPECT_EQ(*stopped.status, 0) << vigil.log();
}

// A looped TUD-Campus camera `a` detecting 5 frames a second with the model in `model`.
std::string clipCameraWith(const std::filesystem::path& model) {
  return fmt::format(
      "version: 1\ndetector:\n  model: {}\nhttp: {{listen: '127.0.0.1:0'}}\ncameras:\n  - "
      "{{name: a, source: 'file:{}', loop: true, detect_fps: 5}}\n",
      model.string(), videoFile("TUD-Campus.mp4"));
}

// A reload to a bundle whose weights are broken (the file a user half-copied): the load fails
// on the loader thread and the running detector keeps detecting, named as before.
TEST(RunDaemonTest, SighupToADetectorThatDoesNotLoadKeepsTheOldOneDetecting) {
  VIGIL_REQUIRE_CLIPS();
  TempDir dir;
  const auto broken = dir.path() / "broken-model";
  std::filesystem::copy(modelDir(), broken, std::filesystem::copy_options::recursive);
  std::ofstream(broken / "yolox_nano.onnx", std::ios::trunc) << "not an ONNX model";
  VigilDaemon vigil(dir.path(), clipCameraWith(modelDir()));
  ASSERT_NE(vigil.port(), 0) << vigil.log();
  ASSERT_TRUE(vigil.waitDetected("a", 0)) << vigil.log();
  const std::string backendBefore = vigil.status()["backend"]["name"].get<std::string>();

  std::ofstream(dir.path() / "cameras.yaml") << clipCameraWith(broken);
  vigil.process().signal(SIGHUP);
  ASSERT_TRUE(vigil.process().waitForLog("reload: the new detector does not load ("))
      << vigil.log();
  const std::string log = vigil.log();
  EXPECT_NE(log.find("; the previous one keeps running"), std::string::npos) << log;
  const std::uint64_t after = vigil.detected("a");
  EXPECT_TRUE(vigil.waitDetected("a", after)) << vigil.log();
  EXPECT_EQ(vigil.status()["backend"]["name"], backendBefore);
  auto stopped = vigil.stop(SIGTERM);
  ASSERT_TRUE(stopped.status.has_value());
  EXPECT_EQ(*stopped.status, 0) << vigil.log();
}

// A file system whose reads never answer (tests/tools/hung_fs.py, FUSE): a model on a network
// share that hangs. Its one file is weights(); unmounted when this goes.
class HungFileSystem {
 public:
  // The share's one file: `name`.
  HungFileSystem(const std::filesystem::path& dir, const std::string& name)
      : mountpoint_(dir / "hung"),
        file_(mountpoint_ / name),
        process_((std::filesystem::create_directory(mountpoint_),
                  std::vector<std::string>{"/usr/bin/python3",
                                           VIGIL_SOURCE_DIR "/tests/tools/hung_fs.py",
                                           mountpoint_.string(), "--name", name}),
                 dir / "hung_fs.log") {}
  ~HungFileSystem() { end(); }
  HungFileSystem(const HungFileSystem&) = delete;
  HungFileSystem& operator=(const HungFileSystem&) = delete;

  bool mounted() { return process_.waitForLog("hung_fs: mounted", 20s); }
  // The share answers again, with errors (its server gone, unmounted): what a user does to a
  // share that hangs, and what frees a thread stuck in it.
  void end() {
    process_.stop(SIGKILL);                      // a read it holds keeps SIGTERM from ending it
    ::umount2(mountpoint_.c_str(), MNT_DETACH);  // left mounted by the kill
  }
  // Somebody's read of the file hangs now.
  bool readWaits() { return process_.waitForLog("hung_fs: a read waits"); }
  std::string log() const { return process_.log(); }
  const std::filesystem::path& file() const { return file_; }

 private:
  std::filesystem::path mountpoint_;
  std::filesystem::path file_;
  testing::ChildProcess process_;
};

// Declared after the daemon, ends the share before the daemon is reaped, in every outcome: a
// thread stuck in the share (the failure the camera tests look for) would keep the killed daemon
// from ending.
struct EndTheShareFirst {
  HungFileSystem& share;
  ~EndTheShareFirst() { share.end(); }
};

// A stop while a reload's detector loads, and the load does not end (its weights on a share
// that stopped answering): the stop abandons the load, says so, and ends within 2 s with status
// 0. The control thread never waited for the share: detection went on with the old detector.
TEST(RunDaemonTest, AStopDuringADetectorLoadThatHangsEndsWithinTwoSeconds) {
  VIGIL_REQUIRE_CLIPS();
  TempDir dir;
  HungFileSystem share(dir.path(), "weights.onnx");
  ASSERT_TRUE(share.mounted()) << "a FUSE mount needs /dev/fuse, root and python3-fusepy\n"
                               << share.log();
  const auto hung = dir.path() / "hung-model";
  std::filesystem::copy(modelDir(), hung, std::filesystem::copy_options::recursive);
  std::filesystem::remove(hung / "yolox_nano.onnx");
  std::filesystem::create_symlink(share.file(), hung / "yolox_nano.onnx");
  VigilDaemon vigil(dir.path(), clipCameraWith(modelDir()));
  ASSERT_NE(vigil.port(), 0) << vigil.log();
  ASSERT_TRUE(vigil.waitDetected("a", 0)) << vigil.log();

  std::ofstream(dir.path() / "cameras.yaml") << clipCameraWith(hung);
  vigil.process().signal(SIGHUP);
  ASSERT_TRUE(vigil.process().waitForLog("reload: loading the new detector")) << vigil.log();
  const std::uint64_t after = vigil.detected("a");
  ASSERT_TRUE(vigil.waitDetected("a", after)) << vigil.log();
  ASSERT_EQ(vigil.log().find("reload: the new detector"), std::string::npos)
      << "the load was meant to hang\n"
      << vigil.log();
  auto [status, took] = vigil.stop(SIGTERM);
  ASSERT_TRUE(status.has_value()) << vigil.log();
  EXPECT_EQ(*status, 0) << vigil.log();
  EXPECT_WITHIN(took, 2s);
  std::printf("[ stop ] during a hung detector load: SIGTERM to exit %.3f s\n",
              std::chrono::duration<double>(took).count());
  const std::string log = vigil.log();
  EXPECT_NE(log.find("a detector load under way for "), std::string::npos) << log;
  EXPECT_NE(log.find("] stopped"), std::string::npos) << "the stop's last line\n" << log;
}

// A file camera on a share that stopped answering: its capture thread sits in a read that
// nothing interrupts. A reload that restarts that camera leaves the thread behind at its
// deadline (CameraSet::kStopLimit) instead of waiting for the share: the reload is applied,
// /api/status answers and the other camera goes on detecting; the restarted camera waits for the
// old thread rather than opening the file a second time. SIGTERM ends the process within 2 s
// with status 0 (the thread still in the read ends with it).
TEST(RunDaemonTest, AFileCameraOnAHungShareStallsNeitherAReloadNorTheStop) {
  VIGIL_REQUIRE_CLIPS();
  TempDir dir;
  HungFileSystem share(dir.path(), "entrance.mp4");
  ASSERT_TRUE(share.mounted()) << "a FUSE mount needs /dev/fuse, root and python3-fusepy\n"
                               << share.log();
  auto config = [&](int hungFps) {
    return fmt::format(
        "version: 1\ndetector:\n  model: {}\nhttp: {{listen: '127.0.0.1:0'}}\ncameras:\n"
        "  - {{name: a, source: 'file:{}', loop: true, detect_fps: 5}}\n"
        "  - {{name: entrance, source: 'file:{}', loop: true, detect_fps: {}}}\n",
        modelDir().string(), videoFile("TUD-Campus.mp4"), share.file().string(), hungFps);
  };
  VigilDaemon vigil(dir.path(), config(2));
  EndTheShareFirst endTheShareFirst{share};
  ASSERT_NE(vigil.port(), 0) << vigil.log();
  ASSERT_TRUE(vigil.waitDetected("a", 0)) << vigil.log();
  ASSERT_TRUE(share.readWaits()) << share.log() << vigil.log();

  std::ofstream(dir.path() / "cameras.yaml") << config(3);
  vigil.process().signal(SIGHUP);
  ASSERT_TRUE(vigil.process().waitForLog("reload applied: 1 camera(s) restarted")) << vigil.log();
  EXPECT_NE(vigil.log().find("[cam=entrance] the capture thread did not end after the stop"),
            std::string::npos)
      << vigil.log();
  EXPECT_TRUE(vigil.waitForCamera("entrance", [](const nlohmann::json& entrance) {
    return entrance["last_error"].dump().find("waiting for the previous capture thread") !=
           std::string::npos;
  })) << vigil.camera("entrance").dump();
  const nlohmann::json entrance = vigil.camera("entrance");
  ASSERT_FALSE(entrance.is_null()) << vigil.log();
  EXPECT_EQ(entrance["detect_fps"], 3) << entrance.dump();
  EXPECT_EQ(entrance["state"], "starting") << entrance.dump();
  const std::uint64_t after = vigil.detected("a");
  ASSERT_TRUE(vigil.waitDetected("a", after)) << vigil.log();

  auto [status, took] = vigil.stop(SIGTERM);
  ASSERT_TRUE(status.has_value()) << vigil.log();
  EXPECT_EQ(*status, 0) << vigil.log();
  EXPECT_WITHIN(took, 2s);
  std::printf("[ stop ] with a camera stuck in a read: SIGTERM to exit %.3f s\n",
              std::chrono::duration<double>(took).count());
  const std::string log = vigil.log();
  EXPECT_NE(log.find("] stopped"), std::string::npos) << "the stop's last line\n" << log;
  EXPECT_EQ(testing::occurrences(log, "the capture thread did not end after the stop"), 1U)
      << "the restarted camera waited, and ended at the stop\n"
      << log;
  const std::string reads = share.log();
  EXPECT_EQ(testing::occurrences(reads, "hung_fs: opened"), 1U)
      << "the file was opened again before the first read ended\n"
      << reads;
}

// The daemon's stop with a camera stuck in a read of a hung share (no reload before): the stop
// waits CameraSet::kStopLimit for that capture thread, leaves it behind, and the process ends
// within 2 s with status 0.
TEST(RunDaemonTest, AStopWithACameraStuckInAReadEndsWithinTwoSeconds) {
  VIGIL_REQUIRE_CLIPS();
  TempDir dir;
  HungFileSystem share(dir.path(), "entrance.mp4");
  ASSERT_TRUE(share.mounted()) << "a FUSE mount needs /dev/fuse, root and python3-fusepy\n"
                               << share.log();
  VigilDaemon vigil(
      dir.path(),
      fmt::format("version: 1\ndetector:\n  model: {}\nhttp: {{listen: '127.0.0.1:0'}}\n"
                  "cameras:\n  - {{name: entrance, source: 'file:{}', detect_fps: 2}}\n",
                  modelDir().string(), share.file().string()));
  EndTheShareFirst endTheShareFirst{share};
  ASSERT_NE(vigil.port(), 0) << vigil.log();
  ASSERT_TRUE(share.readWaits()) << share.log() << vigil.log();
  auto [status, took] = vigil.stop(SIGTERM);
  ASSERT_TRUE(status.has_value()) << vigil.log();
  EXPECT_EQ(*status, 0) << vigil.log();
  EXPECT_WITHIN(took, 2s);
  std::printf("[ stop ] with the only camera stuck in a read: SIGTERM to exit %.3f s\n",
              std::chrono::duration<double>(took).count());
  EXPECT_NE(vigil.log().find("[cam=entrance] the capture thread did not end after the stop"),
            std::string::npos)
      << vigil.log();
}

// The one-by-one clip (10 fps): the room is empty for 5.8 s, a person walks in and stands still
// until about 20 s, the room is empty again until 23 s, a second person stands until about
// 44 s. The same 44 s run with and without motion gating: the empty and still stretches are
// gated, and the person events are the same, starting within two detect intervals; with only
// keyframes decoded while idle (the default), within one keyframe interval (1 s) more, since
// the motion check then sees only the keyframes.
// Gating as in the "still" mode of scripts/bench-daemon.sh, with still_detect_interval 1 s
// (1.5 s left to clear_after for a slow detection on a loaded machine).
TEST(RunDaemonTest, MotionGatingKeepsThePersonEventsOfTheOneByOneClip) {
  VIGIL_REQUIRE_MODEL();
  const std::string oneByOne = videoFile("one-by-one-person-detection.mp4");
  if (!std::filesystem::exists(oneByOne)) GTEST_SKIP() << "clip absent: " << oneByOne;
  // detect_fps 2.5, which a loaded 2-core test machine sustains without gating too (at 5 its
  // detections come irregularly, and two ungated runs alone differ by up to 4 frames).
  constexpr int kFramesPerDetectInterval = 4;  // 10 fps clip
  constexpr int kFramesPerKeyframeInterval = 10;
  // The runs at once: a third of the time, and all see the same machine (a load that delays one
  // delays the others alike).
  struct Run {
    std::string name;
    TempDir dir;
    std::unique_ptr<ChildProcess> vigil;
  };
  auto start = [&](Run& run, const std::string& motion) {
    std::ofstream(run.dir.path() / "cameras.yaml")
        << header() << "cameras:\n"
        << "  - {name: door, source: 'file:" << oneByOne << "', detect_fps: 2.5,\n"
        << "     presence: {min_frames: 2, clear_after: 2.5}" << motion << "}\n";
    run.vigil = std::make_unique<ChildProcess>(
        std::vector<std::string>{VIGIL_BINARY, "run", "--config",
                                 (run.dir.path() / "cameras.yaml").string(), "--duration", "44",
                                 "--summary-json", (run.dir.path() / "summary.json").string()},
        run.dir.path() / "log");
  };
  auto finish = [&](Run& run) {
    auto status = run.vigil->wait(kDeadline + 44s);
    EXPECT_TRUE(status.has_value()) << run.name << "\n" << run.vigil->log();
    EXPECT_EQ(status.value_or(-1), 0) << run.name << "\n" << run.vigil->log();
    std::ifstream in(run.dir.path() / "summary.json");
    auto summary = nlohmann::json::parse(in, nullptr, false);
    EXPECT_FALSE(summary.is_discarded()) << run.name << "\n" << run.vigil->log();
    return summary.is_discarded() ? nlohmann::json::object() : summary["cameras"]["door"];
  };
  Run plainRun{"without gating", {}, nullptr};
  Run gatedRun{"with gating", {}, nullptr};
  Run keyframesRun{"with gating, keyframes only while idle", {}, nullptr};
  const std::string gating =
      ",\n     motion: {idle_after: 1, idle_detect_interval: 2, still_detect_interval: 1, "
      "threshold: 50, min_area: 0.03";
  start(plainRun, ",\n     motion: {enabled: false}");
  start(gatedRun, gating + ", idle_keyframes_only: false}");
  start(keyframesRun, gating + ", idle_keyframes_only: true}");
  auto plain = finish(plainRun);
  auto gated = finish(gatedRun);
  auto keyframes = finish(keyframesRun);
  ASSERT_TRUE(plain.contains("person_events"));
  EXPECT_EQ(plain["gated"], 0);
  // Decoded on demand, ungated: the detected frames (each once, whoever else looked), not every
  // one read (with gating, the motion check's pictures are decoded too: ObservabilityTest).
  EXPECT_GE(plain["decoded"].get<int>(), plain["detected"].get<int>()) << plain.dump();
  EXPECT_LE(plain["decoded"].get<int>(), plain["detected"].get<int>() + 1) << plain.dump();
  const auto& a = plain["person_events"];
  EXPECT_GE(a.size(), 2U) << plain.dump();
  auto startFrames = [](const nlohmann::json& events) {
    std::string starts;
    for (const auto& event : events) {
      starts += " " + std::to_string(event["start_frame"].get<long>());
    }
    return starts;
  };
  std::printf("[ events ] without gating: starting at frames%s\n", startFrames(a).c_str());
  auto expectTheSameEvents = [&](const nlohmann::json& run, const char* name, int tolerance) {
    ASSERT_TRUE(run.contains("person_events")) << name;
    EXPECT_GT(run["gated"].get<int>(), 20) << name << " " << run.dump();
    const auto& b = run["person_events"];
    std::printf("[ events ] %s: gated %d, starting at frames%s\n", name, run["gated"].get<int>(),
                startFrames(b).c_str());
    ASSERT_EQ(a.size(), b.size()) << "plain " << plain.dump() << "\n" << name << " " << run.dump();
    for (std::size_t i = 0; i < a.size(); ++i) {
      auto fa = a[i]["start_frame"].get<long>();
      auto fb = b[i]["start_frame"].get<long>();
      EXPECT_LE(std::abs(fa - fb), tolerance)
          << "event " << i << " starts at frame " << fa << " without gating, " << fb << " " << name;
    }
  };
  // Two detect intervals: the runs detect different frames, and a person walking in is not
  // detected on every frame (`vigil detect --conf 0.1 --json` on the first one walking in: 0.54,
  // nothing, 0.61 on three frames in a row), so a run whose detection falls on such a frame
  // starts one interval later; tracking confirms a person on their second detection.
  expectTheSameEvents(gated, "with gating", 2 * kFramesPerDetectInterval);
  expectTheSameEvents(keyframes, "with keyframes only while idle",
                      2 * kFramesPerDetectInterval + kFramesPerKeyframeInterval);
}

TEST(RunDaemonTest, CheckConfigSummarisesOrPointsAtTheError) {
  TempDir dir;
  std::ofstream(dir.path() / "good.yaml")
      << "version: 1\nnode: hall\nmqtt: {url: 'mqtt://127.0.0.1:1883'}\n"
         "cameras:\n  - {name: door, source: /dev/video0, detect_fps: 2}\n"
         "  - name: street\n    source: rtsp://192.0.2.7/stream\n    detect_fps: 20\n"
         "    zones: [{name: gate, polygon: [[0, 0], [1, 0], [1, 1]]}]\n"
         "    masks: [[[0, 0], [0.1, 0], [0.1, 0.1]]]\n"
         "    motion: {idle_after: 3}\n";
  std::ofstream(dir.path() / "bad.yaml")
      << "version: 1\ncameras:\n  - {name: door, source: /dev/video0, detect_fps: 0}\n";
  ChildProcess good({VIGIL_BINARY, "check-config", (dir.path() / "good.yaml").string()},
                    dir.path() / "good.log");
  ASSERT_TRUE(good.wait().value_or(-1) == 0) << good.log();
  EXPECT_NE(good.log().find("2 camera(s):"), std::string::npos) << good.log();
  // Everything that changes what Vigil does is in the summary; what a source ignores is not.
  EXPECT_NE(good.log().find("mqtt: mqtt://127.0.0.1:1883, QoS 1, Home Assistant discovery under "
                            "homeassistant/, snapshots off"),
            std::string::npos)
      << good.log();
  EXPECT_NE(good.log().find("http on 127.0.0.1:9842 without logins: loopback, so every page "
                            "answers this machine's users"),
            std::string::npos)
      << good.log();
  EXPECT_NE(good.log().find("640x480 @ the lowest fps offered at or above detect_fps, format auto, "
                            "detect 2 fps"),
            std::string::npos)
      << "a V4L2 device is asked for a size and rate\n"
      << good.log();
  EXPECT_NE(good.log().find("rtsp://192.0.2.7/stream  detect 20 fps"), std::string::npos)
      << "detect_fps 20 is no error for RTSP, and its size and rate are its own\n"
      << good.log();
  EXPECT_NE(good.log().find("    zones: gate\n"), std::string::npos) << good.log();
  EXPECT_NE(good.log().find("    masks: 1 (persons standing in them are ignored)"),
            std::string::npos)
      << good.log();
  EXPECT_NE(good.log().find("    motion gating: on (idle after 3 s: one detection every 2 s)"),
            std::string::npos)
      << good.log();
  EXPECT_NE(good.log().find("door"), std::string::npos);
  EXPECT_NE(good.log().find("tracking (lost after 1 s)"), std::string::npos) << good.log();
  // The defaults a fleet box starts with, said before anything else.
  EXPECT_NE(good.log().find("node: hall (MQTT client id vigil-hall, topics under vigil/hall/)"),
            std::string::npos)
      << good.log();
  const bool withOrt = backendNames().find("cpu-ort") != std::string::npos;
  EXPECT_NE(good.log().find(std::string("backend auto (here: ") +
                            (withOrt ? "cpu-ort, then cpu" : "cpu") + "), 1 CPU thread,"),
            std::string::npos)
      << good.log();
  ChildProcess bad({VIGIL_BINARY, "check-config", (dir.path() / "bad.yaml").string()},
                   dir.path() / "bad.log");
  EXPECT_EQ(bad.wait().value_or(-1), 1);
  EXPECT_EQ(bad.log(), (dir.path() / "bad.yaml").string() +
                           ":3:51: cameras[0].detect_fps: must be between 0.01 and 120, got 0\n")
      << "as a compiler says it: file:line:col first, no log time or level";
}

TEST(RunDaemonTest, CheckConfigAndRunNameEveryMistakeInFileOrder) {
  TempDir dir;
  const std::string file = (dir.path() / "cameras.yaml").string();
  std::ofstream(file) << "version: 1\n"
                         "cameras:\n"
                         "  - name: door\n"
                         "    source: /dev/video0\n"
                         "    detect_fsp: 2\n"
                         "    detect_fps: -1\n"
                         "log: {level: loud}\n";
  ChildProcess check({VIGIL_BINARY, "check-config", file}, dir.path() / "check.log");
  EXPECT_EQ(check.wait().value_or(-1), 1);
  const std::string said = check.log();
  EXPECT_EQ(said.rfind("3 errors:\n" + file +
                           ":5:5: cameras[0].detect_fsp: unknown key; did you "
                           "mean 'detect_fps'?",
                       0),
            0U)
      << said;
  EXPECT_NE(
      said.find("\n" + file +
                ":6:17: cameras[0].detect_fps: must be between 0.01 and 120, got -1\n" + file +
                ":7:14: log.level: must be trace, debug, info, warn or error, got "
                "'loud'\n"),
      std::string::npos)
      << said;
  // `vigil run` refuses to start with the same three.
  ChildProcess run({VIGIL_BINARY, "run", "--config", file}, dir.path() / "run.log");
  EXPECT_NE(run.wait().value_or(0), 0) << run.log();
  EXPECT_NE(run.log().find("3 errors:"), std::string::npos) << run.log();
  for (const char* at :
       {":5:5: cameras[0].detect_fsp", ":6:17: cameras[0].detect_fps", ":7:14: log.level"}) {
    EXPECT_NE(run.log().find(file + at), std::string::npos) << at << "\n" << run.log();
  }
}

}  // namespace
}  // namespace vigil
