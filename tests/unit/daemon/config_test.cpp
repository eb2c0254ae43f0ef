#include "daemon/config.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/temp_dir.h"

namespace vigil {
namespace {

Expected<Config> parse(const std::string& text) {
  return parseConfig(text, "/etc/vigil/cameras.yaml");
}

std::string errorOf(const std::string& text) {
  auto c = parse(text);
  EXPECT_FALSE(c.has_value());
  return c ? std::string() : c.error().message;
}

const char* kMinimal =
    "version: 1\n"
    "cameras:\n"
    "  - name: front\n"
    "    source: /dev/video0\n";

TEST(ConfigTest, MinimalFileGetsDocumentedDefaults) {
  auto c = parse(kMinimal);
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->detector.backend, "cpu");
  EXPECT_FLOAT_EQ(c->detector.minScore, 0.5F);
  EXPECT_EQ(c->detector.classes, std::vector<std::string>{"person"});
  ASSERT_EQ(c->cameras.size(), 1U);
  const CameraConfig& cam = c->cameras[0];
  EXPECT_EQ(cam.kind, SourceKind::kV4l2);
  EXPECT_EQ(cam.location, "/dev/video0");
  EXPECT_EQ(cam.format, PixelFormatChoice::kAuto);
  EXPECT_EQ(cam.width, 640);
  EXPECT_EQ(cam.height, 480);
  EXPECT_DOUBLE_EQ(cam.fps, 10);
  EXPECT_DOUBLE_EQ(cam.detectFps, 5);
  EXPECT_TRUE(cam.enabled);
  EXPECT_FALSE(cam.loop);
}

TEST(ConfigTest, SourceKindsAndRelativeFilePaths) {
  auto c = parse(
      "version: 1\n"
      "detector: {model: ../models/x, backend: auto, threads: 2, min_score: 0.3, nms: 0.6,"
      " classes: [person, dog]}\n"
      "cameras:\n"
      "  - {name: a, source: rtsp://192.0.2.1/s}\n"
      "  - {name: b, source: 'http://192.0.2.2/mjpeg'}\n"
      "  - {name: c, source: 'file:clips/x.mp4', loop: true}\n"
      "  - {name: d, source: /dev/v4l/by-id/usb-cam-video-index0, format: mjpeg, width: 1280,"
      " height: 720, fps: 30, detect_fps: 2.5, enabled: false}\n");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->detector.model, "/etc/models/x");
  EXPECT_EQ(c->detector.backend, "auto");
  EXPECT_EQ(c->cameras[0].kind, SourceKind::kRtsp);
  EXPECT_EQ(c->cameras[1].kind, SourceKind::kHttp);
  EXPECT_EQ(c->cameras[2].kind, SourceKind::kFile);
  EXPECT_EQ(c->cameras[2].location, "/etc/vigil/clips/x.mp4");
  EXPECT_TRUE(c->cameras[2].loop);
  EXPECT_EQ(c->cameras[3].format, PixelFormatChoice::kMjpeg);
  EXPECT_DOUBLE_EQ(c->cameras[3].detectFps, 2.5);
  EXPECT_FALSE(c->cameras[3].enabled);
}

TEST(ConfigTest, ErrorsNameLineColumnKeyAndReason) {
  EXPECT_EQ(errorOf("version: 1\n"
                    "cameras:\n"
                    "  - name: front\n"
                    "    source: /dev/video0\n"
                    "    fps: 0\n"),
            "/etc/vigil/cameras.yaml:5:10: cameras[0].fps: must be between 0.1 and 120, got 0");
  EXPECT_EQ(errorOf("version: 1\n"
                    "cameras:\n"
                    "  - name: front\n"
                    "    source: /dev/video0\n"
                    "    fsp: 10\n"),
            "/etc/vigil/cameras.yaml:5:5: cameras[0].fsp: unknown key (allowed here: name, "
            "source, format, width, height, fps, detect_fps, enabled, loop)");
}

TEST(ConfigTest, RejectsWhatWouldGoWrongLater) {
  EXPECT_NE(errorOf("cameras: []\n").find("version: required key is missing"), std::string::npos);
  EXPECT_NE(errorOf("version: 2\ncameras: []\n").find("version: must be between 1 and 1, got 2"),
            std::string::npos);
  EXPECT_NE(errorOf("version: 1\ncameras:\n  - {name: Front, source: /dev/video0}\n")
                .find("cameras[0].name: must be 1 to 64 characters of a-z"),
            std::string::npos);
  EXPECT_NE(errorOf("version: 1\ncameras:\n  - {name: a, source: /dev/video0}\n"
                    "  - {name: a, source: /dev/video1}\n")
                .find("cameras[1].name: 'a' is already the name of another camera"),
            std::string::npos);
  EXPECT_NE(errorOf("version: 1\ncameras:\n  - {name: a, source: camera1}\n")
                .find("cameras[0].source: must be a V4L2 device"),
            std::string::npos);
  EXPECT_NE(errorOf("version: 1\ncameras:\n  - {name: a, source: /dev/video0, loop: true}\n")
                .find("cameras[0].loop: only file: sources can loop"),
            std::string::npos);
  EXPECT_NE(errorOf("version: 1\ncameras:\n  - {name: a, source: /dev/video0, fps: 5,"
                    " detect_fps: 10}\n")
                .find("cameras[0].detect_fps: must not exceed fps (5), got 10"),
            std::string::npos);
  EXPECT_NE(errorOf("version: 1\ndetector: {backend: gpu}\ncameras: []\n")
                .find("detector.backend: must be cpu, npu or auto, got 'gpu'"),
            std::string::npos);
  EXPECT_NE(errorOf("version: 1\ncameras:\n  - {name: a, source: /dev/video0, format: h264}\n")
                .find("cameras[0].format: must be auto, mjpeg or yuyv, got 'h264'"),
            std::string::npos);
  EXPECT_NE(errorOf("version: 1\nmqtt: {}\ncameras: []\n").find("mqtt: unknown key"),
            std::string::npos);
  EXPECT_NE(errorOf("version: 1\nversion: 1\ncameras: []\n").find("2:1: version: duplicate key"),
            std::string::npos);
  EXPECT_NE(errorOf("version: 1\ncameras: [\n").find("invalid YAML"), std::string::npos);
  EXPECT_NE(errorOf("version: 1\ncameras:\n  - {name: a, source: /dev/video0, width: wide}\n")
                .find("cameras[0].width: expected an integer, got 'wide'"),
            std::string::npos);
}

TEST(ConfigTest, ShippedExamplesAreValid) {
  for (const char* name : {"cameras.yaml", "demo.yaml"}) {
    auto c = loadConfig(std::filesystem::path(VIGIL_SOURCE_DIR) / "config" / name);
    ASSERT_TRUE(c.has_value()) << name << ": " << c.error().message;
    EXPECT_FALSE(c->cameras.empty()) << name;
  }
}

TEST(ConfigTest, MissingFileIsNotFound) {
  TempDir dir;
  auto c = loadConfig(dir.path() / "nope.yaml");
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().code, ErrorCode::kNotFound);
  EXPECT_NE(c.error().message.find("cannot open file"), std::string::npos);
}

}  // namespace
}  // namespace vigil
