// The frame rate `vigil run` says is the one it measured: an MJPEG-over-HTTP camera sending 10
// pictures a second, whose rate FFmpeg guesses (25 for any such stream), is logged at its
// measured rate, and /api/status shows the same.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>
#include <regex>
#include <string>
#include <vector>

#include "tests/loopback_server.h"
#include "tests/model_paths.h"
#include "tests/occurrences.h"
#include "tests/process.h"
#include "tests/temp_dir.h"
#include "tests/vigil_daemon.h"
#include "tests/wait.h"

namespace vigil {
namespace {

TEST(CameraRateTest, AnMjpegCameraIsLoggedAtTheRateItSendsNotTheOneDeclared) {
  VIGIL_REQUIRE_MODEL();
  cv::Mat picture(240, 320, CV_8UC3, cv::Scalar(40, 90, 160));
  std::vector<std::uint8_t> jpeg;
  cv::imencode(".jpg", picture, jpeg);
  // 10 pictures a second (streamMjpeg's interval).
  testing::LoopbackServer camera([&](int fd) {
    if (!testing::readRequestHead(fd).empty()) testing::streamMjpeg(fd, jpeg);
  });
  ASSERT_NE(camera.port(), 0);
  TempDir dir;
  testing::VigilDaemon vigil(
      dir.path(), "version: 1\ndetector:\n  model: " + testing::modelDir().string() +
                      "\nhttp: {listen: '127.0.0.1:0'}\ncameras:\n  - {name: door, source: "
                      "'http://127.0.0.1:" +
                      std::to_string(camera.port()) + "/mjpeg', detect_fps: 1}\n");
  ASSERT_NE(vigil.port(), 0) << vigil.log();
  ASSERT_TRUE(vigil.process().waitForLog("[cam=door] measured ")) << vigil.log();
  const std::string log = vigil.log();

  std::smatch streaming;
  ASSERT_TRUE(std::regex_search(log, streaming, std::regex(R"(\[cam=door\] streaming: ([^\n]*))")))
      << log;
  const std::string said = streaming[1];
  EXPECT_TRUE(said.find("fps (declared by the source)") != std::string::npos ||
              said.find("rate not declared") != std::string::npos)
      << "a declared rate is said as declared, never as the camera's: " << said;

  std::smatch measured;
  ASSERT_TRUE(std::regex_search(log, measured,
                                std::regex(R"(\[cam=door\] measured ([0-9.]+) fps([^\n]*))")))
      << log;
  const double fps = std::stod(measured[1]);
  EXPECT_NEAR(fps, 10.0, 1.0) << measured[0];
  std::smatch declared;
  if (std::regex_search(said, declared, std::regex(R"(at ([0-9.]+) fps \(declared)"))) {
    const double claimed = std::stod(declared[1]);
    if (std::abs(claimed - fps) > 0.1 * claimed) {
      EXPECT_NE(measured[2].str().find("the source declared"), std::string::npos)
          << "a declared rate that is off is named beside the measured one: " << measured[0];
    }
  }
  // The status shows the measured rate too.
  ASSERT_TRUE(testing::waitUntil([&] {
    nlohmann::json door = vigil.camera("door");
    return door.is_object() && door["fps_captured"].is_number() &&
           std::abs(door["fps_captured"].get<double>() - 10.0) <= 1.0;
  })) << vigil.camera("door").dump();
  EXPECT_EQ(testing::occurrences(vigil.log(), "[cam=door] measured "), 1U) << "said once\n"
                                                                           << vigil.log();
}

}  // namespace
}  // namespace vigil
