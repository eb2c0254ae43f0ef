// One entry of `cameras:` (readCamera), on its own: its defaults, the capture section's decoding
// defaults it takes unless it says otherwise, what it reads of zones, lines, motion and tracking
// (and how they depend on each other), its sources and password, and each mistake said at its
// file:line:col with its key.
#include "daemon/config/camera_section.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "tests/temp_dir.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;

// The first camera of `cameras:` in `text` (its entries indented by four), read with `capture`;
// warnings into `warnings`. Files are relative to `base`.
CameraConfig firstCamera(const std::string& text, std::vector<std::string>& warnings,
                         const std::filesystem::path& base = "/etc/vigil",
                         const CaptureConfig& capture = {}) {
  const YamlReader r = YamlReader::fromString(text, "cameras.yaml");
  return yaml_config::readCamera(r, r.root()["cameras"][0], "cameras[0]", base, capture, warnings);
}

CameraConfig firstCamera(const std::string& text) {
  std::vector<std::string> warnings;
  return firstCamera(text, warnings);
}

// The error readCamera throws for `text`, or "" when it reads.
std::string cameraErrorOf(const std::string& text) {
  try {
    firstCamera(text);
  } catch (const YamlError& e) {
    return e.what();
  }
  return "";
}

TEST(CameraSectionTest, ACameraWithANameAndASourceHasTheDefaults) {
  const CameraConfig c = firstCamera("cameras:\n  - name: door\n    source: /dev/video0\n");
  EXPECT_EQ(c.name, "door");
  EXPECT_EQ(c.kind, SourceKind::kV4l2);
  EXPECT_EQ(c.location, "/dev/video0");
  EXPECT_EQ(c.format, PixelFormatChoice::kAuto);
  EXPECT_EQ(c.width, 640);
  EXPECT_EQ(c.height, 480);
  EXPECT_FALSE(c.fpsSet) << "the device is asked for its lowest rate covering detect_fps";
  EXPECT_EQ(c.detectFps, 5);
  EXPECT_TRUE(c.enabled);
  EXPECT_FALSE(c.loop);
  EXPECT_TRUE(c.motion.enabled) << "no motion section reads as an empty one: gating on";
  EXPECT_TRUE(c.tracking.enabled);
  EXPECT_EQ(c.tracking.lostAfter, 1s);
  EXPECT_EQ(c.presence.minFrames, 2);
  EXPECT_EQ(c.presence.clearAfter, 5s);
  EXPECT_TRUE(c.zones.empty());
  EXPECT_TRUE(c.lines.empty());
  EXPECT_FALSE(c.picture.enabled());
}

TEST(CameraSectionTest, TheCaptureSectionsDecodingIsEveryCamerasUnlessItSaysOtherwise) {
  CaptureConfig capture;
  capture.hwDecode.accel = HwAccel::kVaapi;
  capture.hwDecode.device = "/dev/dri/renderD129";
  capture.skipLoopFilter = false;
  std::vector<std::string> warnings;
  const CameraConfig inherits = firstCamera("cameras:\n  - name: door\n    source: rtsp://cam/1\n",
                                            warnings, "/etc/vigil", capture);
  EXPECT_EQ(inherits.hwDecode.accel, HwAccel::kVaapi);
  EXPECT_EQ(inherits.hwDecode.device, "/dev/dri/renderD129");
  EXPECT_FALSE(inherits.skipLoopFilter);
  const CameraConfig own =
      firstCamera("cameras:\n  - name: door\n    source: rtsp://cam/1\n    hwaccel: none\n",
                  warnings, "/etc/vigil", capture);
  EXPECT_EQ(own.hwDecode.accel, HwAccel::kNone);
  EXPECT_EQ(own.hwDecode.device, "/dev/dri/renderD129");
}

TEST(CameraSectionTest, ZonesMasksAndLinesAreReadInFractionsOfTheFrame) {
  const CameraConfig c = firstCamera(
      "cameras:\n"
      "  - name: door\n"
      "    source: rtsp://cam/1\n"
      "    zones:\n"
      "      - name: porch\n"
      "        polygon: [[0, 0], [0.5, 0], [0.5, 1]]\n"
      "        min_frames: 3\n"
      "        loiter_after: 30\n"
      "    masks:\n"
      "      - [[0.9, 0], [1, 0], [1, 1]]\n"
      "    lines:\n"
      "      - name: entrance\n"
      "        points: [[0.5, 0], [0.5, 1]]\n"
      "        names: {in: arrive, out: leave}\n");
  ASSERT_EQ(c.zones.size(), 1U);
  EXPECT_EQ(c.zones[0].name, "porch");
  EXPECT_EQ(c.zones[0].polygon, (Polygon{{0, 0}, {0.5F, 0}, {0.5F, 1}}));
  EXPECT_EQ(c.zones[0].minFrames, 3);
  EXPECT_EQ(c.zones[0].loiterAfter, 30s);
  ASSERT_EQ(c.masks.size(), 1U);
  ASSERT_EQ(c.lines.size(), 1U);
  EXPECT_EQ(c.lines[0].name, "entrance");
  EXPECT_EQ(c.lines[0].points, (std::vector<LinePoint>{{0.5, 0}, {0.5, 1}}));
  EXPECT_EQ(c.lines[0].inName, "arrive");
  EXPECT_EQ(c.lines[0].outName, "leave");
}

TEST(CameraSectionTest, ATrackKeepsItsIdAcrossTheStillDetectInterval) {
  const CameraConfig c = firstCamera(
      "cameras:\n  - name: door\n    source: rtsp://cam/1\n"
      "    motion: {still_detect_interval: 2}\n");
  EXPECT_EQ(c.motion.stillDetectInterval, 2s);
  EXPECT_EQ(c.tracking.lostAfter, 4s) << "twice the interval by default";
  EXPECT_NE(cameraErrorOf("cameras:\n  - name: door\n    source: rtsp://cam/1\n"
                          "    motion: {still_detect_interval: 2}\n    tracking: {lost_after: 2}\n")
                .find("cameras[0].tracking.lost_after: must be above "
                      "motion.still_detect_interval (2 s)"),
            std::string::npos);
  EXPECT_NE(cameraErrorOf("cameras:\n  - name: door\n    source: rtsp://cam/1\n"
                          "    motion: {still_detect_interval: 5}\n")
                .find("cameras[0].motion.still_detect_interval: must be below "
                      "presence.clear_after (5 s)"),
            std::string::npos);
}

TEST(CameraSectionTest, EachMistakeIsSaidAtItsPlaceWithItsKey) {
  EXPECT_EQ(cameraErrorOf("cameras:\n  - name: door\n    source: /dev/video0\n    fsp: 10\n"),
            "cameras.yaml:4:5: cameras[0].fsp: unknown key; did you mean 'fps'? (allowed here: "
            "name, source, picture_source, picture_width, picture_height, password_file, format, "
            "width, height, fps, detect_fps, denoise, enabled, loop, zones, masks, presence, "
            "motion, tracking, lines, calibration_samples, hwaccel, regions, history)");
  EXPECT_EQ(cameraErrorOf("cameras:\n  - name: Door\n    source: /dev/video0\n"),
            "cameras.yaml:2:11: cameras[0].name: must be 1 to 64 characters of a-z, 0-9, _ and "
            "-, got 'Door'");
  EXPECT_EQ(cameraErrorOf("cameras:\n  - name: door\n    source: ftp://cam\n"),
            "cameras.yaml:3:13: cameras[0].source: must be a V4L2 device (/dev/videoN, "
            "/dev/v4l/by-id/...), rtsp://, http(s):// or file:PATH, got 'ftp://cam'");
  EXPECT_EQ(cameraErrorOf("cameras:\n  - name: door\n    source: /dev/video0\n    loop: true\n"),
            "cameras.yaml:4:11: cameras[0].loop: only file: sources can loop");
  EXPECT_EQ(cameraErrorOf("cameras:\n  - name: door\n    source: /dev/video0\n    fps: 5\n"
                          "    detect_fps: 10\n"),
            "cameras.yaml:5:17: cameras[0].detect_fps: must not exceed fps (5), got 10");
  EXPECT_NE(cameraErrorOf("cameras:\n  - name: door\n    source: rtsp://cam/1\n"
                          "    zones:\n      - {name: camera, polygon: [[0, 0], [1, 0], [1, 1]]}\n")
                .find("cameras[0].zones[0].name: must be 1 to 64 characters"),
            std::string::npos)
      << "'camera' names the whole camera's topics";
  EXPECT_NE(cameraErrorOf("cameras:\n  - name: door\n    source: rtsp://cam/1\n"
                          "    tracking: {enabled: false}\n"
                          "    lines:\n      - {name: entrance, points: [[0.5, 0], [0.5, 1]]}\n")
                .find("cameras[0].lines: counting lines need tracking"),
            std::string::npos);
  EXPECT_NE(cameraErrorOf("cameras:\n  - name: door\n    source: /dev/video0\n"
                          "    lines:\n      - {name: entrance, points: [[320, 0], [320, 480]]}\n")
                .find("not pixels: [[320, 0], [320, 480]] on this camera's 640x480 frames is "
                      "[[0.5, 0], [0.5, 1]]"),
            std::string::npos)
      << "a line in pixels is refused with the same line in fractions";
}

TEST(CameraSectionTest, AFileSourceIsResolvedAgainstTheFileAndAMissingOneIsAWarning) {
  TempDir dir;
  std::vector<std::string> warnings;
  const CameraConfig c = firstCamera("cameras:\n  - name: door\n    source: file:clips/door.mp4\n",
                                     warnings, dir.path());
  EXPECT_EQ(c.kind, SourceKind::kFile);
  EXPECT_EQ(c.location, (dir.path() / "clips/door.mp4").string());
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_NE(warnings[0].find("cameras[0].source: '" + c.location +
                             "' does not exist (yet); the camera retries until it does"),
            std::string::npos)
      << warnings[0];
}

TEST(CameraSectionTest, APasswordFileGoesIntoANetworkSourcesUrlOnly) {
  TempDir dir;
  writeFile(dir.path() / "door.pass", "s3cret\n");
  ::chmod((dir.path() / "door.pass").c_str(), 0600);
  std::vector<std::string> warnings;
  const CameraConfig c = firstCamera(
      "cameras:\n  - name: door\n    source: rtsp://admin@cam/1\n    password_file: door.pass\n",
      warnings, dir.path());
  EXPECT_EQ(c.location, "rtsp://admin:s3cret@cam/1");
  EXPECT_EQ(c.source, "rtsp://admin@cam/1") << "as written, without the password";
  EXPECT_EQ(c.passwordFile, (dir.path() / "door.pass").string());
  EXPECT_TRUE(warnings.empty());

  const YamlReader r = YamlReader::fromString(
      "cameras:\n  - name: door\n    source: /dev/video0\n    password_file: door.pass\n",
      "cameras.yaml");
  EXPECT_THROW(
      yaml_config::readCamera(r, r.root()["cameras"][0], "cameras[0]", dir.path(), {}, warnings),
      YamlError)
      << "a V4L2 device takes no password";
}

}  // namespace
}  // namespace vigil
