// `vigil run` with cameras whose JPEGs libjpeg decodes with warnings (issue 51): an MJPEG-over-
// HTTP camera and an MJPEG file sending only damaged or cut-short pictures, and a UVC-style
// camera whose every good picture has stray bytes before its end marker. What libjpeg says goes
// through Vigil's log with the camera's name, once a minute per kind, and into
// vigil_camera_decode_warnings_total; a damaged picture is a corrupt frame, never detected on; a
// camera giving only damaged pictures is lost and reconnected; the harmless warning keeps its
// camera streaming and detected on.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "tests/damaged_jpeg.h"
#include "tests/http_get.h"
#include "tests/loopback_server.h"
#include "tests/model_paths.h"
#include "tests/occurrences.h"
#include "tests/temp_dir.h"
#include "tests/vigil_daemon.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;
using testing::LoopbackServer;
using testing::readRequestHead;
using testing::streamMjpeg;
using testing::VigilDaemon;

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
  LoopbackServer badCamera([&](int fd) {
    if (readRequestHead(fd).empty()) return;
    streamMjpeg(fd, [&](int i) -> const std::vector<std::uint8_t>& {
      return bad[static_cast<std::size_t>(i) % bad.size()];
    });
  });
  LoopbackServer uvcCamera([&](int fd) {
    if (!readRequestHead(fd).empty()) streamMjpeg(fd, padded);
  });
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
  ASSERT_TRUE(testing::waitUntil([&] { return badCamera.accepted() >= 2; })) << vigil.log();
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
  for (const char* text : {"Corrupt JPEG data", "Premature end of JPEG", "extraneous bytes"}) {
    EXPECT_EQ(unloggedLines(log, text), std::vector<std::string>()) << text;
  }
}

}  // namespace
}  // namespace vigil
