// /api/cameras/<name>/stream.mjpeg from the real daemon: a real client (curl) receives several
// frames that decode, and many viewers that never read cannot keep /healthz from answering.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <fstream>
#include <opencv2/imgcodecs.hpp>
#include <regex>
#include <sstream>

#include "tests/http_get.h"
#include "tests/model_paths.h"
#include "tests/process.h"
#include "tests/temp_dir.h"
#include "tests/vigil_daemon.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;

constexpr const char* kStreamCurl = "/usr/bin/curl";

std::filesystem::path streamedClip() { return testing::videosDir() / "TUD-Campus.mp4"; }

std::string streamingCameras() {
  return "version: 1\ndetector:\n  model: " + testing::modelDir().string() +
         "\nhttp: {listen: '127.0.0.1:0'}\ncameras:\n  - {name: door, source: 'file:" +
         streamedClip().string() + "', loop: true, detect_fps: 5}\n";
}

// The JPEG parts of a multipart/x-mixed-replace body, by their Content-Length.
std::vector<std::string> jpegParts(const std::string& body) {
  std::vector<std::string> parts;
  std::size_t at = 0;
  while ((at = body.find("--vigil-frame\r\n", at)) != std::string::npos) {
    const auto length = body.find("Content-Length: ", at);
    const auto start = body.find("\r\n\r\n", at);
    if (length == std::string::npos || start == std::string::npos) break;
    const std::size_t size = std::stoul(body.substr(length + 16));
    if (start + 4 + size > body.size()) break;  // cut by the client's time limit
    parts.push_back(body.substr(start + 4, size));
    at = start + 4 + size;
  }
  return parts;
}

TEST(LiveStreamTest, AViewerGetsSeveralFramesAndIdleViewersCannotStopHealthChecks) {
  VIGIL_REQUIRE_MODEL();
  if (access(kStreamCurl, X_OK) != 0) GTEST_SKIP() << "curl is not installed";
  if (!std::filesystem::exists(streamedClip())) GTEST_SKIP() << "clip absent: " << streamedClip();
  TempDir dir;
  testing::VigilDaemon vigil(dir.path(), streamingCameras());
  ASSERT_NE(vigil.port(), 0) << vigil.log();
  const std::string base = "http://127.0.0.1:" + std::to_string(vigil.port());
  ASSERT_TRUE(testing::waitUntil([&] {
    auto latest = testing::httpGet(vigil.port(), "/api/cameras/door/latest.jpg");
    return latest && latest->status == 200;
  })) << vigil.log();

  // Viewers that ask for the stream and never read: each holds a connection, none may hold
  // the places health checks and scrapes need.
  std::vector<int> idle;
  for (int i = 0; i < 100; ++i) {
    const int fd = testing::connectLoopback(vigil.port());
    ASSERT_GE(fd, 0);
    const std::string request =
        "GET /api/cameras/door/stream.mjpeg HTTP/1.1\r\nHost: x\r\n\r\n";
    ASSERT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(request.size()));
    idle.push_back(fd);
  }
  auto metric = [&](const std::string& name) {
    auto metrics = testing::httpGet(vigil.port(), "/metrics");
    std::smatch m;
    return metrics && std::regex_search(metrics->body, m, std::regex("\\n" + name + " (\\d+)"))
               ? std::stoi(m[1])
               : -1;
  };
  // The first 64 are streams; the rest are refused (503) rather than take the places left.
  ASSERT_TRUE(testing::waitUntil([&] { return metric("vigil_http_streams_refused_total") == 36; }))
      << metric("vigil_http_streams_refused_total");
  EXPECT_EQ(metric("vigil_http_streams_open"), 64);
  for (int i = 0; i < 10; ++i) {
    auto health = testing::httpGet(vigil.port(), "/healthz");
    ASSERT_TRUE(health) << "health check " << i << " not answered";
    EXPECT_EQ(health->status, 200) << health->body;
  }
  // Viewers that go are noticed at the next frame written to them.
  for (int fd : idle) ::close(fd);
  ASSERT_TRUE(testing::waitUntil([&] { return metric("vigil_http_streams_open") == 0; }))
      << metric("vigil_http_streams_open");

  // A real client reads the stream for a few seconds.
  testing::ChildProcess curl({kStreamCurl, "-s", "--max-time", "4", "-o",
                              (dir.path() / "stream.bin").string(), "-D",
                              (dir.path() / "headers.txt").string(),
                              base + "/api/cameras/door/stream.mjpeg"},
                             dir.path() / "curl.log");
  curl.wait();
  std::ifstream headersFile(dir.path() / "headers.txt");
  std::stringstream headers;
  headers << headersFile.rdbuf();
  EXPECT_NE(headers.str().find("multipart/x-mixed-replace; boundary=vigil-frame"),
            std::string::npos)
      << headers.str();
  std::ifstream in(dir.path() / "stream.bin", std::ios::binary);
  std::stringstream body;
  body << in.rdbuf();
  const auto parts = jpegParts(body.str());
  EXPECT_GE(parts.size(), 3U) << "4 s at 5 detections a second";
  EXPECT_LE(parts.size(), 30U) << "at most the camera's detection rate (5/s), not faster";
  for (const std::string& jpeg : parts) {
    cv::Mat picture = cv::imdecode(std::vector<unsigned char>(jpeg.begin(), jpeg.end()),
                                   cv::IMREAD_COLOR);
    EXPECT_FALSE(picture.empty()) << "every part is a JPEG";
  }
  // Home Assistant's MJPEG IP Camera without a still image URL takes the stream's bytes from
  // the first start-of-image marker to the end-of-image marker after it: that is a whole
  // picture (no thumbnail's end marker inside).
  const std::string& bytes = body.str();
  const auto soi = bytes.find("\xff\xd8");
  const auto eoi = bytes.find("\xff\xd9", soi);
  ASSERT_TRUE(soi != std::string::npos && eoi != std::string::npos);
  ASSERT_FALSE(parts.empty());
  EXPECT_EQ(bytes.substr(soi, eoi + 2 - soi), parts.front())
      << "the bytes Home Assistant extracts are the stream's first picture";
}

}  // namespace
}  // namespace vigil
