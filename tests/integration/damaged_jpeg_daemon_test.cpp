// `vigil run` with cameras whose JPEGs libjpeg decodes with warnings (issue 51): an MJPEG-over-
// HTTP camera and an MJPEG file sending only damaged or cut-short pictures, and a UVC-style
// camera whose every good picture has stray bytes before its end marker. What libjpeg says goes
// through Vigil's log with the camera's name, once a minute per kind, and into
// vigil_camera_decode_warnings_total; a damaged picture is a corrupt frame, never detected on; a
// camera giving only damaged pictures is lost and reconnected; the harmless warning keeps its
// camera streaming and detected on.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>
#include <vector>

#include "tests/damaged_jpeg.h"
#include "tests/free_port.h"
#include "tests/http_get.h"
#include "tests/model_paths.h"
#include "tests/occurrences.h"
#include "tests/temp_dir.h"
#include "tests/vigil_daemon.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;
using testing::VigilDaemon;

// An MJPEG-over-HTTP camera on loopback: to every viewer, the multipart header, then
// picture(connection, i) for i = 0, 1, ... at 10 fps, each with its Content-Length, until the
// viewer or the server goes. Counts its connections.
class JpegCameraServer {
 public:
  using Picture = std::function<const std::vector<std::uint8_t>&(int connection, int i)>;

  explicit JpegCameraServer(Picture picture) : picture_(std::move(picture)) {
    listen_ = testing::listenOnLoopback(8, port_);
    acceptor_ = std::thread([this] {
      while (!stopping_) {
        const int fd = accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) continue;
        std::lock_guard lock(mutex_);
        fds_.push_back(fd);
        viewers_.emplace_back([this, fd, n = connections_++] { serve(fd, n); });
      }
    });
  }
  ~JpegCameraServer() {
    stopping_ = true;
    shutdown(listen_, SHUT_RDWR);
    acceptor_.join();
    std::lock_guard lock(mutex_);
    for (int fd : fds_) shutdown(fd, SHUT_RDWR);
    for (auto& v : viewers_) v.join();
    for (int fd : fds_) close(fd);
    close(listen_);
  }
  JpegCameraServer(const JpegCameraServer&) = delete;
  JpegCameraServer& operator=(const JpegCameraServer&) = delete;

  int port() const { return port_; }
  int connections() const { return connections_.load(); }

 private:
  static bool sendAllBytes(int fd, const std::string& data) {
    for (std::size_t sent = 0; sent < data.size();) {
      const ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<std::size_t>(n);
    }
    return true;
  }

  void serve(int fd, int connection) {
    std::string request;
    char buffer[4096];
    while (request.find("\r\n\r\n") == std::string::npos) {
      const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
      if (n <= 0) return;
      request.append(buffer, static_cast<std::size_t>(n));
    }
    if (!sendAllBytes(fd,
                      "HTTP/1.0 200 OK\r\nContent-Type: multipart/x-mixed-replace; "
                      "boundary=frame\r\n\r\n")) {
      return;
    }
    for (int i = 0; !stopping_; ++i) {
      const std::vector<std::uint8_t>& jpeg = picture_(connection, i);
      const std::string part =
          "--frame\r\nContent-Type: image/jpeg\r\nContent-Length: " + std::to_string(jpeg.size()) +
          "\r\n\r\n" + std::string(jpeg.begin(), jpeg.end()) + "\r\n";
      if (!sendAllBytes(fd, part)) return;
      std::this_thread::sleep_for(100ms);  // the camera's frame rate, not a wait for a result
    }
  }

  Picture picture_;
  int listen_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::mutex mutex_;
  std::vector<int> fds_;
  std::vector<std::thread> viewers_;
  std::thread acceptor_;
};

// The value of a series in a /metrics text; -1 when absent.
double metricValue(const std::string& metrics, const std::string& series) {
  const auto at = metrics.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(metrics.substr(at + series.size() + 2));
}

// Lines of `log` that say `text` without being one of Vigil's own log lines about a camera:
// what libjpeg would have written to standard error itself.
std::vector<std::string> unloggedLines(const std::string& log, const std::string& text) {
  std::vector<std::string> found;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(text) != std::string::npos && line.find("[cam=") == std::string::npos) {
      found.push_back(line);
    }
  }
  return found;
}

TEST(DamagedJpegDaemonTest, DamagedPicturesAreCorruptFramesLoggedOnceAndTheirCameraIsLost) {
  VIGIL_REQUIRE_MODEL();
  const std::vector<std::uint8_t> good = testing::photographJpeg({640, 480});
  ASSERT_FALSE(good.empty()) << testing::missingCocoReason();
  // Damaged pictures of several kinds of noise, and cut-short ones, in turn.
  std::vector<std::vector<std::uint8_t>> bad;
  for (unsigned seed = 1; seed <= 4; ++seed) bad.push_back(testing::damagedJpeg(good, seed));
  bad.push_back(testing::truncatedJpeg(good));
  const std::vector<std::uint8_t> padded = testing::extraneousBytesJpeg(good);
  JpegCameraServer badCamera(
      [&](int, int i) -> const std::vector<std::uint8_t>& { return bad[i % bad.size()]; });
  JpegCameraServer uvcCamera([&](int, int) -> const std::vector<std::uint8_t>& { return padded; });
  ASSERT_NE(badCamera.port(), 0);
  ASSERT_NE(uvcCamera.port(), 0);
  TempDir dir;
  const auto file = dir.path() / "damaged.mjpeg";
  {
    std::ofstream out(file, std::ios::binary);
    for (int round = 0; round < 5; ++round) {
      for (const auto& p : bad) {
        out.write(reinterpret_cast<const char*>(p.data()), static_cast<std::streamsize>(p.size()));
      }
    }
  }
  const auto started = std::chrono::steady_clock::now();
  VigilDaemon vigil(dir.path(), "version: 1\ndetector:\n  model: " + testing::modelDir().string() +
                                    "\nhttp: {listen: '127.0.0.1:0'}\ncameras:\n"
                                    "  - {name: bad, source: 'http://127.0.0.1:" +
                                    std::to_string(badCamera.port()) + "/mjpeg', detect_fps: 2}\n" +
                                    "  - {name: uvc, source: 'http://127.0.0.1:" +
                                    std::to_string(uvcCamera.port()) + "/mjpeg', detect_fps: 2}\n" +
                                    "  - {name: file, source: 'file:" + file.string() +
                                    "', loop: true, detect_fps: 2}\n");
  ASSERT_NE(vigil.port(), 0) << vigil.log();
  // Every picture the bad camera sends arrives (its markers and size are right) and decodes
  // damaged: nothing usable for the stall limit, so it is lost and reconnected.
  ASSERT_TRUE(vigil.process().waitForLog(
      "[cam=bad] source lost, reconnecting with backoff: no usable picture for 5000 ms: every "
      "one decoded was corrupt (the last: corrupt frame: ",
      30s))
      << vigil.log();
  ASSERT_TRUE(testing::waitUntil([&] { return badCamera.connections() >= 2; })) << vigil.log();
  ASSERT_TRUE(vigil.waitForCamera("bad", [](const nlohmann::json& c) {
    return c["frames"]["reconnects"].get<int>() >= 1;
  })) << vigil.camera("bad").dump();
  // The harmless warning: the UVC camera streams and is detected on.
  ASSERT_TRUE(vigil.waitDetected("uvc", 0, 5)) << vigil.log();
  ASSERT_TRUE(vigil.waitForCamera("file", [](const nlohmann::json& c) {
    return c["frames"]["decode_errors"].get<int>() >= 3;
  })) << vigil.camera("file").dump();

  const nlohmann::json badStatus = vigil.camera("bad");
  const nlohmann::json uvc = vigil.camera("uvc");
  const nlohmann::json fileStatus = vigil.camera("file");
  EXPECT_EQ(badStatus["frames"]["detected"], 0) << "never detected on: " << badStatus.dump();
  EXPECT_GE(badStatus["frames"]["decode_errors"].get<int>(), 5) << badStatus.dump();
  EXPECT_GE(badStatus["frames"]["decode_warnings"]["truncated"].get<int>() +
                badStatus["frames"]["decode_warnings"]["damaged_data"].get<int>(),
            5)
      << badStatus.dump();
  EXPECT_EQ(fileStatus["frames"]["detected"], 0) << fileStatus.dump();
  EXPECT_EQ(uvc["state"], "streaming") << uvc.dump();
  EXPECT_EQ(uvc["frames"]["decode_errors"], 0) << uvc.dump();
  EXPECT_EQ(uvc["frames"]["reconnects"], 0) << uvc.dump();
  EXPECT_GE(uvc["frames"]["decode_warnings"]["extraneous_bytes"].get<int>(), 5) << uvc.dump();
  auto metrics = testing::httpGet(vigil.port(), "/metrics");
  ASSERT_TRUE(metrics.has_value());
  EXPECT_GE(
      metricValue(metrics->body,
                  "vigil_camera_decode_warnings_total{camera=\"uvc\",kind=\"extraneous_bytes\"}"),
      5)
      << metrics->body;
  EXPECT_EQ(metricValue(metrics->body,
                        "vigil_camera_decode_warnings_total{camera=\"uvc\",kind=\"truncated\"}"),
            0);
  EXPECT_GE(metricValue(metrics->body, "vigil_camera_decode_errors_total{camera=\"bad\"}"), 5);
  ASSERT_TRUE(vigil.stop().status.has_value());

  // Said through the log with the camera's name, once a minute per camera and kind; nothing
  // from libjpeg on standard error (which goes to the same log file).
  const std::string log = vigil.log();
  const auto windows =
      static_cast<std::size_t>(1 + std::chrono::duration_cast<std::chrono::minutes>(
                                       std::chrono::steady_clock::now() - started)
                                       .count());
  for (const char* camera : {"bad", "file"}) {
    const std::string said = std::string("[cam=") + camera + "] JPEG decoder: Corrupt JPEG data: ";
    EXPECT_GE(testing::occurrences(log, said), 1U) << camera << "\n" << log;
    EXPECT_LE(testing::occurrences(log, said), 2U * windows) << camera << "\n" << log;
  }
  const std::size_t uvcLines =
      testing::occurrences(log, "[cam=uvc] JPEG decoder: Corrupt JPEG data: ");
  EXPECT_GE(uvcLines, 1U) << log;
  EXPECT_LE(uvcLines, windows) << "once a minute, not once a picture\n" << log;
  EXPECT_EQ(testing::occurrences(log,
                                 "extraneous bytes before marker 0xd9 (extraneous_bytes: "
                                 "harmless, the picture is used)"),
            uvcLines)
      << log;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("JPEG decoder") != std::string::npos ||
        line.find("source lost") != std::string::npos) {
      std::printf("%s\n", line.c_str());
    }
  }
  for (const char* text : {"Corrupt JPEG data", "Premature end of JPEG", "extraneous bytes"}) {
    EXPECT_EQ(unloggedLines(log, text), std::vector<std::string>()) << text;
  }
}

}  // namespace
}  // namespace vigil
