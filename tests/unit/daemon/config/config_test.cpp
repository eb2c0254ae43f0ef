#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "daemon/config/config_file.h"
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

TEST(ConfigTest, CaptureScaledDecodeIsOnByDefaultAndCanBeTurnedOff) {
  auto c = parse(kMinimal);
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_TRUE(c->capture.scaledDecode);
  auto off = parse(std::string(kMinimal) + "capture: {scaled_decode: false}\n");
  ASSERT_TRUE(off.has_value()) << off.error().message;
  EXPECT_FALSE(off->capture.scaledDecode);
  EXPECT_EQ(errorOf(std::string(kMinimal) + "capture:\n  scaled: false\n"),
            "/etc/vigil/cameras.yaml:6:3: capture.scaled: unknown key (allowed here: "
            "scaled_decode, skip_loop_filter, hwaccel, vaapi_device)");
  EXPECT_NE(
      errorOf(std::string(kMinimal) + "capture: {scaled_decode: sometimes}\n")
          .find("/etc/vigil/cameras.yaml:5:26: capture.scaled_decode: expected true or false"),
      std::string::npos);
}

TEST(ConfigTest, HistoryKeepsTwoWeeksAGigabyteAndEveryCameraUnlessItSaysNo) {
  auto c = parse(kMinimal);
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->history.retainDays, 14);
  EXPECT_EQ(c->history.maxMegabytes, 1024);
  EXPECT_TRUE(c->cameras[0].history);
  auto set = parse(std::string(kMinimal) +
                   "    history: false\nhistory: {retain_days: 3, max_megabytes: 200}\n");
  ASSERT_TRUE(set.has_value()) << set.error().message;
  EXPECT_EQ(set->history.retainDays, 3);
  EXPECT_EQ(set->history.maxMegabytes, 200);
  EXPECT_FALSE(set->cameras[0].history);
  EXPECT_NE(errorOf(std::string(kMinimal) + "history: {retain_days: 0}\n")
                .find("/etc/vigil/cameras.yaml:5:24: history.retain_days"),
            std::string::npos);
  EXPECT_NE(
      errorOf(std::string(kMinimal) + "history: {days: 3}\n").find("history.days: unknown key"),
      std::string::npos);
}

TEST(ConfigTest, SkipLoopFilterIsOnByDefaultAndReachesEveryCamera) {
  auto c = parse(kMinimal);
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_TRUE(c->capture.skipLoopFilter);
  EXPECT_TRUE(c->cameras[0].skipLoopFilter);
  auto off = parse(std::string(kMinimal) + "capture: {skip_loop_filter: false}\n");
  ASSERT_TRUE(off.has_value()) << off.error().message;
  EXPECT_FALSE(off->capture.skipLoopFilter);
  EXPECT_FALSE(off->cameras[0].skipLoopFilter) << "a camera restarts when it changes";
  EXPECT_NE(errorOf(std::string(kMinimal) + "capture: {skip_loop_filter: 2}\n")
                .find("capture.skip_loop_filter: expected true or false"),
            std::string::npos);
}

TEST(ConfigTest, HwaccelIsACaptureDefaultThatACameraOverrides) {
  auto none = parse(kMinimal);
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->cameras[0].hwDecode.accel, HwAccel::kNone) << "software unless asked";
  auto c = parse(
      "version: 1\n"
      "capture: {hwaccel: vaapi, vaapi_device: /dev/dri/renderD129}\n"
      "cameras:\n"
      "  - {name: a, source: 'rtsp://192.0.2.1/s'}\n"
      "  - {name: b, source: 'rtsp://192.0.2.2/s', hwaccel: none}\n");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->cameras[0].hwDecode, (HwDecode{HwAccel::kVaapi, "/dev/dri/renderD129"}));
  EXPECT_EQ(c->cameras[1].hwDecode.accel, HwAccel::kNone);
  EXPECT_EQ(errorOf(std::string(kMinimal) + "    hwaccel: cuda\n"),
            "/etc/vigil/cameras.yaml:5:14: cameras[0].hwaccel: must be none or vaapi, got 'cuda'");
}

TEST(ConfigTest, AV4l2CameraWithoutFpsIsAskedForWhatItsDetectFpsNeeds) {
  auto c = parse(
      "version: 1\ncameras:\n  - {name: a, source: /dev/video0, detect_fps: 15}\n"
      "  - {name: b, source: /dev/video1, fps: 30, detect_fps: 15}\n");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_FALSE(c->cameras[0].fpsSet) << "detect_fps above the default fps of 10 is no error then";
  EXPECT_TRUE(c->cameras[1].fpsSet);
  EXPECT_EQ(c->cameras[1].fps, 30);
}

TEST(ConfigTest, MinimalFileGetsDocumentedDefaults) {
  auto c = parse(kMinimal);
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->detector.backend, "auto") << "the fastest backend that loads";
  EXPECT_EQ(c->detector.threads, 1) << "the least CPU per frame";
  EXPECT_EQ(c->node, hostNodeName());
  EXPECT_EQ(c->mqtt.clientId, "vigil-" + hostNodeName());
  EXPECT_EQ(c->mqtt.topicPrefix, "vigil/" + hostNodeName());
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
      "  - {name: c, source: 'file:clips/x.mp4', loop: true, denoise: true}\n"
      "  - {name: d, source: /dev/v4l/by-id/usb-cam-video-index0, format: mjpeg, width: 1280,"
      " height: 720, fps: 30, detect_fps: 2.5, enabled: false}\n");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->detector.model, "/etc/models/x");
  EXPECT_EQ(c->detector.backend, "auto");
  auto ort = parse("version: 1\ndetector: {backend: cpu-ort}\ncameras: []\n");
  ASSERT_TRUE(ort.has_value()) << ort.error().message;
  EXPECT_EQ(ort->detector.backend, "cpu-ort");
  EXPECT_EQ(c->cameras[0].kind, SourceKind::kRtsp);
  EXPECT_EQ(c->cameras[1].kind, SourceKind::kHttp);
  EXPECT_EQ(c->cameras[2].kind, SourceKind::kFile);
  EXPECT_EQ(c->cameras[2].location, "/etc/vigil/clips/x.mp4");
  EXPECT_TRUE(c->cameras[2].loop);
  EXPECT_TRUE(c->cameras[2].denoise);
  EXPECT_FALSE(c->cameras[0].denoise) << "off unless asked for";
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
            "/etc/vigil/cameras.yaml:5:5: cameras[0].fsp: unknown key; did you mean 'fps'? "
            "(allowed here: name, "
            "source, picture_source, picture_width, picture_height, password_file, format, width, "
            "height, fps, detect_fps, denoise, enabled, loop, zones, masks, presence, motion, "
            "tracking, "
            "lines, calibration_samples, hwaccel, regions, history)");
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
                .find("detector.backend: must be cpu, cpu-ort, npu or auto, got 'gpu'"),
            std::string::npos);
  EXPECT_NE(errorOf("version: 1\ncameras:\n  - {name: a, source: /dev/video0, format: h264}\n")
                .find("cameras[0].format: must be auto, mjpeg or yuyv, got 'h264'"),
            std::string::npos);
  EXPECT_NE(
      errorOf("version: 1\nmqtt: {broker: x}\ncameras: []\n").find("mqtt.broker: unknown key"),
      std::string::npos);
  EXPECT_NE(errorOf("version: 1\nversion: 1\ncameras: []\n").find("2:1: version: duplicate key"),
            std::string::npos);
  EXPECT_NE(errorOf("version: 1\ncameras: [\n").find("invalid YAML"), std::string::npos);
  EXPECT_NE(errorOf("version: 1\ncameras:\n  - {name: a, source: /dev/video0, width: wide}\n")
                .find("cameras[0].width: expected an integer, got 'wide'"),
            std::string::npos);
}

TEST(ConfigTest, NoMqttSectionMeansNoMqtt) {
  auto c = parse(kMinimal);
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_FALSE(c->mqtt.enabled);
  EXPECT_TRUE(c->cameras[0].zones.empty());
  EXPECT_EQ(c->cameras[0].presence, PresenceSettings{});
}

TEST(ConfigTest, MqttSectionWithPasswordFileAndDefaults) {
  TempDir dir;
  std::ofstream(dir.path() / "mqtt-password") << "s3cret\n";
  std::ofstream(dir.path() / "cameras.yaml") << "version: 1\n"
                                                "mqtt:\n"
                                                "  url: mqtt://192.0.2.5:1883\n"
                                                "  username: vigil\n"
                                                "  password_file: mqtt-password\n"
                                                "  topic_prefix: home/vigil\n"
                                                "cameras: []\n";
  auto c = loadConfig(dir.path() / "cameras.yaml");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  const MqttConfig& m = c->mqtt;
  EXPECT_TRUE(m.enabled);
  EXPECT_EQ(m.url, "mqtt://192.0.2.5:1883");
  EXPECT_EQ(m.password, "s3cret") << "one line, without its newline";
  EXPECT_EQ(m.passwordFile, (dir.path() / "mqtt-password").string());
  EXPECT_EQ(m.topicPrefix, "home/vigil");
  EXPECT_EQ(m.clientId, "vigil-" + hostNodeName());
  EXPECT_EQ(m.qos, 1);
  EXPECT_EQ(m.bufferMessages, 1000U);
  EXPECT_TRUE(m.haDiscovery);
  EXPECT_EQ(m.haPrefix, "homeassistant");
  EXPECT_FALSE(m.snapshots);
}

TEST(ConfigTest, EveryPartWithAnErrorIsNamedNotOnlyTheFirst) {
  const std::string message = errorOf(
      "version: 1\n"
      "detector: {backend: gpu}\n"
      "cameras:\n"
      "  - {name: door, source: /dev/video0, detect_fps: 0}\n"
      "  - {name: yard, source: /dev/video1}\n"
      "  - {name: Yard, source: /dev/video2}\n");
  EXPECT_NE(message.find("3 errors:"), std::string::npos) << message;
  EXPECT_NE(message.find("detector.backend: must be cpu, cpu-ort, npu or auto, got 'gpu'"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("cameras[0].detect_fps: must be between"), std::string::npos) << message;
  EXPECT_NE(message.find("cameras[2].name:"), std::string::npos) << message;
  EXPECT_EQ(message.find("cameras[1]"), std::string::npos) << "yard is right\n" << message;
}

TEST(ConfigTest, IndependentMistakesAreAllNamedInFileOrderWithTheirCount) {
  // An unknown key and a negative detect_fps in one camera, a bad value in a section after it
  // (read before the cameras): all three, each at its line and column, in the file's order.
  const std::string message = errorOf(
      "version: 1\n"
      "cameras:\n"
      "  - name: door\n"
      "    source: /dev/video0\n"
      "    detect_fsp: 2\n"
      "    detect_fps: -1\n"
      "history:\n"
      "  retain_days: 0\n");
  std::vector<std::string> lines;
  std::istringstream in(message);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 4U) << message;
  EXPECT_EQ(lines[0], "3 errors:");
  EXPECT_EQ(lines[1].rfind("/etc/vigil/cameras.yaml:5:5: cameras[0].detect_fsp: unknown key; did "
                           "you mean 'detect_fps'? (allowed here: name, source,",
                           0),
            0U)
      << lines[1];
  EXPECT_EQ(lines[2],
            "/etc/vigil/cameras.yaml:6:17: cameras[0].detect_fps: must be between 0.01 and 120, "
            "got -1");
  EXPECT_EQ(lines[3],
            "/etc/vigil/cameras.yaml:8:16: history.retain_days: must be between 1 and 3650, got 0");
}

TEST(ConfigTest, TheMqttAndHttpSectionsNameEveryWrongValueNotJustTheFirst) {
  // Before, each of these sections stopped at its first wrong value: one error of five.
  const std::string message = errorOf(
      "version: 1\n"
      "mqtt:\n"
      "  url: 'tcp://broker:1883'\n"
      "  qos: 3\n"
      "  topic_prefix: 'home/#'\n"
      "http:\n"
      "  listen: '9842'\n"
      "  enabled: maybe\n"
      "cameras: []\n");
  EXPECT_EQ(message.rfind("5 errors:\n", 0), 0U) << message;
  const char* expected[] = {":3:8: mqtt.url: must be mqtt://host:port",
                            ":4:8: mqtt.qos: must be between 0 and 2, got 3",
                            ":5:17: mqtt.topic_prefix: must be topic levels",
                            ":7:11: http.listen: must be host:port", ":8:12: http.enabled:"};
  std::size_t at = 0;
  for (const char* part : expected) {
    const std::size_t found = message.find(part, at);
    EXPECT_NE(found, std::string::npos) << part << " (in file order)\n" << message;
    if (found != std::string::npos) at = found;
  }
}

TEST(ConfigTest, ACameraWithAWrongSourceStopsThereButTheOthersAreRead) {
  // What a camera may say after its source depends on the source's kind: not checked against
  // a guess. The next camera's mistake is still named.
  const std::string message = errorOf(
      "version: 1\n"
      "cameras:\n"
      "  - {name: door, source: 'ftp://x', loop: true}\n"
      "  - {name: yard, source: /dev/video1, fps: 0}\n");
  EXPECT_NE(message.find("2 errors:"), std::string::npos) << message;
  EXPECT_NE(message.find("cameras[0].source"), std::string::npos) << message;
  EXPECT_EQ(message.find("cameras[0].loop"), std::string::npos) << message;
  EXPECT_NE(message.find("cameras[1].fps: must be between"), std::string::npos) << message;
}

TEST(ConfigTest, TheNodeNamesTheClientIdAndTheTopicsUnlessTheyAreSet) {
  auto c = parse("version: 1\nnode: hall\nmqtt: {url: 'mqtt://192.0.2.5:1883'}\ncameras: []\n");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->node, "hall");
  EXPECT_EQ(c->mqtt.clientId, "vigil-hall");
  EXPECT_EQ(c->mqtt.topicPrefix, "vigil/hall");

  // The layout before node names, kept for automations written against it.
  auto old =
      parse("version: 1\nnode: hall\nmqtt: {topic_prefix: vigil, client_id: vigil}\ncameras: []\n");
  ASSERT_TRUE(old.has_value()) << old.error().message;
  EXPECT_EQ(old->node, "hall");
  EXPECT_EQ(old->mqtt.clientId, "vigil");
  EXPECT_EQ(old->mqtt.topicPrefix, "vigil");

  EXPECT_NE(errorOf("version: 1\nnode: Hall.Box\ncameras: []\n")
                .find("cameras.yaml:2:7: node: must be 1 to 58 characters of a-z, 0-9, _ and -, "
                      "got 'Hall.Box'"),
            std::string::npos);
  EXPECT_NE(errorOf("version: 1\nnode: " + std::string(59, 'a') + "\ncameras: []\n")
                .find("node: must be 1 to 58 characters"),
            std::string::npos);
}

TEST(ConfigTest, AHostNameBecomesANodeName) {
  EXPECT_EQ(nodeNameOf("hall"), "hall");
  EXPECT_EQ(nodeNameOf("Shop-Box.lan"), "shop-box") << "the first label, lower case";
  EXPECT_EQ(nodeNameOf("ryzen ai_01"), "ryzen-ai_01");
  EXPECT_EQ(nodeNameOf(""), "vigil");
  EXPECT_EQ(nodeNameOf(std::string(80, 'x')), std::string(58, 'x'));
  const std::string here = hostNodeName();
  EXPECT_FALSE(here.empty());
  EXPECT_EQ(here.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-"), std::string::npos)
      << here;
}

TEST(ConfigTest, AWorldReadablePasswordFileIsAWarningWithItsPlace) {
  TempDir dir;
  const auto secret = dir.path() / "mqtt-password";
  std::ofstream(secret) << "s3cret\n";
  std::ofstream(dir.path() / "cameras.yaml") << "version: 1\n"
                                                "mqtt:\n"
                                                "  username: vigil\n"
                                                "  password_file: mqtt-password\n"
                                                "cameras: []\n";
  std::filesystem::permissions(secret, std::filesystem::perms(0644));
  auto c = loadConfig(dir.path() / "cameras.yaml");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->mqtt.password, "s3cret") << "a warning, not a refusal";
  ASSERT_EQ(c->warnings.size(), 1U);
  EXPECT_EQ(c->warnings[0],
            fmt::format("{}:4:18: mqtt.password_file: '{}' is readable by every user (mode 0644); "
                        "chmod 600 or 640 it",
                        (dir.path() / "cameras.yaml").string(), secret.string()));
  EXPECT_EQ(c->warnings[0].find("s3cret"), std::string::npos);

  std::filesystem::permissions(secret, std::filesystem::perms(0640));
  c = loadConfig(dir.path() / "cameras.yaml");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_TRUE(c->warnings.empty());
}

TEST(ConfigTest, MqttPasswordFromTheEnvironmentWhenNoFile) {
  ::setenv(kMqttPasswordEnv, "from-env", 1);
  auto c = parse("version: 1\nmqtt: {username: u}\ncameras: []\n");
  ::unsetenv(kMqttPasswordEnv);
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->mqtt.password, "from-env");
}

TEST(ConfigTest, MqttMistakesAreCaughtAtLoad) {
  EXPECT_NE(errorOf("version: 1\nmqtt: {url: 'tcp://h:1883'}\ncameras: []\n")
                .find("mqtt.url: must be mqtt://host:port or mqtts://host:port"),
            std::string::npos);
  EXPECT_NE(errorOf("version: 1\nmqtt: {password_file: /nonexistent/pw}\ncameras: []\n")
                .find("mqtt.password_file: cannot read '/nonexistent/pw'"),
            std::string::npos);
  EXPECT_NE(errorOf("version: 1\nmqtt: {url: 'mqtt://h', ca_file: /etc/hostname}\ncameras: []\n")
                .find("mqtt.ca_file: set, but mqtt.url 'mqtt://h' is not mqtts://"),
            std::string::npos);
  EXPECT_NE(errorOf("version: 1\nmqtt: {topic_prefix: 'vigil/#'}\ncameras: []\n")
                .find("mqtt.topic_prefix: must be topic levels"),
            std::string::npos);
  EXPECT_NE(errorOf("version: 1\nmqtt: {qos: 3}\ncameras: []\n")
                .find("mqtt.qos: must be between 0 and 2"),
            std::string::npos);
}

TEST(ConfigTest, ZonesMasksAndPresence) {
  auto c = parse(
      "version: 1\n"
      "cameras:\n"
      "  - name: yard\n"
      "    source: /dev/video0\n"
      "    zones:\n"
      "      - name: driveway\n"
      "        polygon: [[0, 0.5], [1, 0.5], [1, 1], [0, 1]]\n"
      "    masks:\n"
      "      - [[0, 0], [0.2, 0], [0.2, 0.2]]\n"
      "    presence: {min_frames: 3, min_score: 0.6, min_area: 0.01, clear_after: 10,\n"
      "               update_interval: 2.5, confirm_score: 0.7}\n");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  const CameraConfig& cam = c->cameras[0];
  ASSERT_EQ(cam.zones.size(), 1U);
  EXPECT_EQ(cam.zones[0].name, "driveway");
  EXPECT_EQ(cam.zones[0].polygon, (Polygon{{0, 0.5F}, {1, 0.5F}, {1, 1}, {0, 1}}));
  ASSERT_EQ(cam.masks.size(), 1U);
  EXPECT_EQ(cam.masks[0].size(), 3U);
  EXPECT_EQ(cam.presence.minFrames, 3);
  EXPECT_FLOAT_EQ(cam.presence.minScore, 0.6F);
  EXPECT_FLOAT_EQ(cam.presence.minArea, 0.01F);
  EXPECT_FLOAT_EQ(cam.presence.confirmScore, 0.7F);
  EXPECT_EQ(cam.presence.clearAfter, std::chrono::milliseconds(10000));
  EXPECT_EQ(cam.presence.updateInterval, std::chrono::milliseconds(2500));
}

TEST(ConfigTest, ZoneMistakesNameThePoint) {
  const std::string head = "version: 1\ncameras:\n  - name: a\n    source: /dev/video0\n";
  EXPECT_NE(errorOf(head + "    zones: [{name: z, polygon: [[0, 0], [1, 0]]}]\n")
                .find("cameras[0].zones[0].polygon: a polygon needs at least 3 points"),
            std::string::npos);
  EXPECT_NE(errorOf(head + "    zones: [{name: z, polygon: [[0, 0], [1, 0], [1.5, 1]]}]\n")
                .find("cameras[0].zones[0].polygon[2][0]: must be between 0 and 1"),
            std::string::npos);
  EXPECT_NE(errorOf(head + "    zones: [{name: z, polygon: [[0, 0], [1, 0], [x, 1]]}]\n")
                .find("polygon[2][0]: expected a number, got 'x'"),
            std::string::npos);
  EXPECT_NE(errorOf(head + "    zones: [{name: person, polygon: [[0, 0], [1, 0], [1, 1]]}]\n")
                .find("cameras[0].zones[0].name: must be"),
            std::string::npos);
  EXPECT_NE(errorOf(head + "    zones: [{name: z, polygon: [[0, 0], [1, 0], [1, 1]]},"
                           " {name: z, polygon: [[0, 0], [1, 0], [1, 1]]}]\n")
                .find("cameras[0].zones[1].name: 'z' is already the name of another zone"),
            std::string::npos);
  EXPECT_NE(errorOf(head + "    masks: [[[0, 0], [1, 0]]]\n")
                .find("cameras[0].masks[0]: a polygon needs at least 3 points"),
            std::string::npos);
  EXPECT_NE(errorOf(head + "    presence: {min_frames: 0}\n")
                .find("cameras[0].presence.min_frames: must be between 1 and 100"),
            std::string::npos);
}

TEST(ConfigTest, ZonesTakeTrackingsMinFramesAndLoiterTime) {
  const std::string head =
      "version: 1\ncameras:\n  - name: a\n    source: /dev/video0\n    zones:\n";
  auto c = parse(head + "      - {name: door, polygon: [[0, 0], [1, 0], [1, 1]]}\n" +
                 "      - {name: gate, polygon: [[0, 0], [1, 0], [1, 1]], min_frames: 3, "
                 "loiter_after: 90}\n");
  ASSERT_TRUE(c) << c.error().message;
  const auto& zones = c->cameras[0].zones;
  EXPECT_EQ(zones[0].minFrames, 1);
  EXPECT_FALSE(zones[0].loiterAfter) << "no loiter event unless asked for";
  EXPECT_EQ(zones[1].minFrames, 3);
  EXPECT_EQ(zones[1].loiterAfter, std::chrono::seconds(90));
  const std::string bad = head + "      - {name: z, polygon: [[0, 0], [1, 0], [1, 1]], ";
  EXPECT_NE(errorOf(bad + "loiter_after: 0}\n")
                .find("cameras.yaml:6:68: cameras[0].zones[0].loiter_after: must be between 1 and "
                      "86400"),
            std::string::npos)
      << errorOf(bad + "loiter_after: 0}\n");
  EXPECT_NE(errorOf(bad + "min_frames: 0}\n")
                .find("cameras[0].zones[0].min_frames: must be between 1 and 100"),
            std::string::npos)
      << errorOf(bad + "min_frames: 0}\n");
  EXPECT_NE(errorOf(bad + "inertia: 3}\n").find("cameras[0].zones[0]"), std::string::npos);
}

TEST(ConfigTest, CountingLinesInFractionsOfTheFrameWithTheirDirectionNames) {
  auto c = parse(
      "version: 1\ncameras:\n  - name: a\n    source: /dev/video0\n    lines:\n"
      "      - name: door\n"
      "        points: [[0.15, 0.8], [0.85, 0.8]]\n"
      "        names: {in: enter, out: leave}\n"
      "      - {name: path, points: [[0, 0], [0.5, 0.4], [1, 1]], min_frames: 2, band: 0}\n");
  ASSERT_TRUE(c) << c.error().message;
  const auto& lines = c->cameras[0].lines;
  ASSERT_EQ(lines.size(), 2U);
  EXPECT_EQ(lines[0].name, "door");
  EXPECT_EQ(lines[0].points, (std::vector<LinePoint>{{0.15, 0.8}, {0.85, 0.8}}));
  EXPECT_EQ(lines[0].inName, "enter");
  EXPECT_EQ(lines[0].outName, "leave");
  EXPECT_EQ(lines[0].minFrames, 1);
  EXPECT_EQ(lines[0].band, kDefaultLineBandPixels);
  EXPECT_EQ(lines[1].points.size(), 3U);
  EXPECT_EQ(lines[1].inName, "in");
  EXPECT_EQ(lines[1].outName, "out");
  EXPECT_EQ(lines[1].minFrames, 2);
  EXPECT_EQ(lines[1].band, 0);
}

// A line in pixels (as earlier versions took them, or a point outside the picture) is refused
// with the same line in fractions: exactly for a V4L2 camera, whose size the file gives, else
// with the rule and an example.
TEST(ConfigTest, ALineInPixelsIsRefusedWithTheLineInFractions) {
  EXPECT_EQ(errorOf("version: 1\ncameras:\n  - name: a\n    source: /dev/video0\n"
                    "    width: 640\n    height: 480\n"
                    "    lines: [{name: door, points: [[320, 0], [320, 480]]}]\n"),
            "/etc/vigil/cameras.yaml:7:34: cameras[0].lines[0].points: points are fractions of "
            "the frame (0 to 1, as zones and masks), not pixels: [[320, 0], [320, 480]] on this "
            "camera's 640x480 frames is [[0.5, 0], [0.5, 1]]");
  const std::string stream = errorOf(
      "version: 1\ncameras:\n  - name: a\n    source: rtsp://cam/live\n"
      "    lines: [{name: door, points: [[0.5, 0.3], [900, 480]]}]\n");
  EXPECT_NE(stream.find("cameras.yaml:5:34: cameras[0].lines[0].points: points are fractions "
                        "of the frame (0 to 1, as zones and masks), not pixels: divide each x "
                        "by the frame's width and each y by its height"),
            std::string::npos)
      << stream;
  EXPECT_NE(errorOf("version: 1\ncameras:\n  - name: a\n    source: /dev/video0\n"
                    "    lines: [{name: door, points: [[0, 0], [-0.1, 1]]}]\n")
                .find("cameras[0].lines[0].points[1][0]: must be between 0 and 1 (a fraction of "
                      "the frame), got -0.1"),
            std::string::npos);
}

TEST(ConfigTest, LineMistakesNameFileLineAndColumn) {
  const std::string head = "version: 1\ncameras:\n  - name: a\n    source: /dev/video0\n";
  EXPECT_EQ(errorOf(head + "    lines: [{name: door, points: [[0, 0]]}]\n"),
            "/etc/vigil/cameras.yaml:5:34: cameras[0].lines[0].points: a line needs at least 2 "
            "points [x, y] (fractions of the frame), got 1");
  EXPECT_EQ(errorOf(head + "    lines: [{name: door, points: [[0, 0], [0.5, 0.5], [0.5, 0.5]]}]\n"),
            "/etc/vigil/cameras.yaml:5:55: cameras[0].lines[0].points[2]: the same point as the "
            "one before it: the segment from [0.5, 0.5] has zero length");
  EXPECT_NE(errorOf(head + "    lines: [{name: door, points: [[0, 0], [0.5, x]]}]\n")
                .find("cameras[0].lines[0].points[1][1]: expected a number, got 'x'"),
            std::string::npos);
  EXPECT_NE(errorOf(head + "    lines: [{name: d, points: [[0, 0], [1, 1]]}, "
                           "{name: d, points: [[0, 0], [1, 1]]}]\n")
                .find("cameras[0].lines[1].name: 'd' is already the name of another line"),
            std::string::npos);
  EXPECT_NE(errorOf(head + "    lines: [{name: d, points: [[0, 0], [1, 1]], names: {in: x, "
                           "out: x}}]\n")
                .find("cameras[0].lines[0].names: in and out are both called 'x'"),
            std::string::npos);
  EXPECT_NE(errorOf(head + "    lines: [{name: person, points: [[0, 0], [1, 1]]}]\n")
                .find("cameras[0].lines[0].name: must be"),
            std::string::npos);
  EXPECT_NE(errorOf(head + "    line: [{name: door, points: [[0, 0], [1, 1]]}]\n")
                .find("cameras[0].line: unknown key; did you mean 'lines'?"),
            std::string::npos);
  // Counting needs identities.
  EXPECT_EQ(errorOf(head + "    tracking: {enabled: false}\n"
                           "    lines: [{name: door, points: [[0, 0], [1, 1]]}]\n"),
            "/etc/vigil/cameras.yaml:6:12: cameras[0].lines: counting lines need tracking (the "
            "identities of persons), which is off for this camera (tracking.enabled: false)");
}

TEST(ConfigTest, TrackingIsOnByDefaultAndItsLostTimeOutlivesTheStillInterval) {
  auto plain = parse(kMinimal);
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_TRUE(plain->cameras[0].tracking.enabled);
  EXPECT_EQ(plain->cameras[0].tracking.lostAfter, std::chrono::seconds(1));
  EXPECT_EQ(plain->cameras[0].tracking.stationary, StationarySettings{});
  const std::string head = std::string(kMinimal) + "    presence: {clear_after: 10}\n";
  // A still person detected every 3 s keeps their track by default: lost after 6 s.
  const std::string still = head + "    motion: {still_detect_interval: 3}\n";
  auto gated = parse(still);
  ASSERT_TRUE(gated) << gated.error().message;
  EXPECT_EQ(gated->cameras[0].tracking.lostAfter, std::chrono::seconds(6));
  auto c = parse(still +
                 "    tracking: {enabled: false, lost_after: 4.5, "
                 "stationary: {max_move: 0.2, after: 30}}\n");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_FALSE(c->cameras[0].tracking.enabled);
  EXPECT_EQ(c->cameras[0].tracking.lostAfter, std::chrono::milliseconds(4500));
  EXPECT_DOUBLE_EQ(c->cameras[0].tracking.stationary.maxMoveFraction, 0.2);
  EXPECT_DOUBLE_EQ(c->cameras[0].tracking.stationary.afterSeconds, 30);
  const std::string tooShort = still + "    tracking: {lost_after: 2}\n";
  EXPECT_NE(errorOf(tooShort).find("cameras.yaml:7:28: cameras[0].tracking.lost_after: must be "
                                   "above motion.still_detect_interval (3 s)"),
            std::string::npos)
      << errorOf(tooShort);
  EXPECT_NE(errorOf(head + "    tracking: {stationary: {after: 0}}\n")
                .find("cameras[0].tracking.stationary.after: must be between 1 and 3600"),
            std::string::npos);
  EXPECT_NE(errorOf(head + "    tracking: {lost: 2}\n").find("cameras[0].tracking"),
            std::string::npos);
}

TEST(ConfigTest, MotionGatingIsOnByDefaultAndReadsItsSection) {
  // A camera without a motion: section gates, at the built-in defaults.
  auto plain = parse(kMinimal);
  ASSERT_TRUE(plain.has_value()) << plain.error().message;
  const MotionSettings& d = plain->cameras[0].motion;
  EXPECT_TRUE(d.enabled);
  EXPECT_EQ(d.threshold, 25);
  EXPECT_EQ(d.idleAfter, std::chrono::seconds(5));
  EXPECT_EQ(d.idleDetectInterval, std::chrono::seconds(2));
  EXPECT_EQ(d.stillDetectInterval, std::chrono::seconds(0));
  EXPECT_FALSE(d.idleKeyframesOnly) << "late events on noisy and constant-bitrate streams";
  // Slower than one detection every 2 s: the idle interval is one detect period.
  auto slow =
      parse("version: 1\ncameras:\n  - {name: door, source: /dev/video0, detect_fps: 0.25}\n");
  ASSERT_TRUE(slow.has_value()) << slow.error().message;
  EXPECT_EQ(slow->cameras[0].motion.idleDetectInterval, std::chrono::seconds(4));
  auto off = parse(
      "version: 1\ncameras:\n  - {name: door, source: /dev/video0, motion: {enabled: false}}\n");
  ASSERT_TRUE(off.has_value()) << off.error().message;
  EXPECT_FALSE(off->cameras[0].motion.enabled);
  auto c = parse(
      "version: 1\n"
      "cameras:\n"
      "  - name: door\n"
      "    source: /dev/video0\n"
      "    detect_fps: 4\n"
      "    masks: [[[0, 0], [0.2, 0], [0.2, 0.2]]]\n"
      "    motion: {threshold: 30, min_area: 0.01, idle_after: 3, idle_detect_interval: 1.5,\n"
      "             still_detect_interval: 2}\n"
      "  - name: yard\n"
      "    source: /dev/video1\n"
      "    motion: {masks: [[[0, 0], [1, 0], [1, 0.3]]]}\n");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  const MotionSettings& m = c->cameras[0].motion;
  EXPECT_TRUE(m.enabled);
  EXPECT_EQ(m.threshold, 30);
  EXPECT_FLOAT_EQ(m.minArea, 0.01F);
  EXPECT_EQ(m.idleAfter, std::chrono::milliseconds(3000));
  EXPECT_EQ(m.idleDetectInterval, std::chrono::milliseconds(1500));
  EXPECT_EQ(m.stillDetectInterval, std::chrono::milliseconds(2000));
  EXPECT_FALSE(m.masks.has_value()) << "without its own masks it uses the camera's";
  // A section that only gives masks has the defaults of no section for the rest.
  const MotionSettings& y = c->cameras[1].motion;
  MotionSettings defaultsWithMasks = d;
  defaultsWithMasks.masks = y.masks;
  EXPECT_EQ(y, defaultsWithMasks);
  ASSERT_TRUE(y.masks.has_value());
  EXPECT_EQ(y.masks->size(), 1U);
}

TEST(ConfigTest, RegionsAreAutoByDefaultAndReadTheirSection) {
  auto plain = parse(kMinimal);
  ASSERT_TRUE(plain.has_value()) << plain.error().message;
  EXPECT_EQ(plain->cameras[0].regions, RegionsConfig{});
  EXPECT_EQ(plain->cameras[0].regions.mode, RegionsConfig::Mode::kAuto);
  auto c = parse(
      "version: 1\n"
      "cameras:\n"
      "  - {name: a, source: /dev/video0, regions: {mode: off}}\n"
      "  - {name: b, source: /dev/video1, regions: {mode: on, whole_every: 0, max_regions: 2}}\n");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->cameras[0].regions.mode, RegionsConfig::Mode::kOff);
  EXPECT_EQ(c->cameras[1].regions.mode, RegionsConfig::Mode::kOn);
  EXPECT_EQ(c->cameras[1].regions.wholeEvery, 0.0);
  EXPECT_EQ(c->cameras[1].regions.maxRegions, 2);
  const std::string head = "version: 1\ncameras:\n  - name: a\n    source: /dev/video0\n";
  EXPECT_NE(errorOf(head + "    regions: {mode: sometimes}\n")
                .find("cameras.yaml:5:21: cameras[0].regions.mode: must be auto, on or off, got "
                      "'sometimes'"),
            std::string::npos)
      << errorOf(head + "    regions: {mode: sometimes}\n");
  EXPECT_NE(errorOf(head + "    regions: {max_regions: 0}\n")
                .find("cameras[0].regions.max_regions: must be between 1 and 16"),
            std::string::npos);
  EXPECT_NE(errorOf(head + "    regions: {whole: 2}\n").find("cameras[0].regions.whole"),
            std::string::npos);
}

TEST(ConfigTest, MotionMistakesNameLineColumnAndKey) {
  const std::string head =
      "version: 1\ncameras:\n  - name: a\n    source: /dev/video0\n    detect_fps: 2\n";
  EXPECT_NE(errorOf(head + "    motion: {idle_detect_interval: 0.2}\n")
                .find("cameras.yaml:6:36: cameras[0].motion.idle_detect_interval: must be 0 or at "
                      "least one detect period (0.5 s at detect_fps 2), got 0.2"),
            std::string::npos)
      << errorOf(head + "    motion: {idle_detect_interval: 0.2}\n");
  EXPECT_NE(errorOf(head + "    motion: {idle_detect_interval: 0}\n")
                .find("cameras[0].motion.idle_detect_interval: must be at least one detect period"),
            std::string::npos);
  EXPECT_NE(errorOf(head + "    motion: {still_detect_interval: 5}\n")
                .find("cameras.yaml:6:37: cameras[0].motion.still_detect_interval: must be below "
                      "presence.clear_after (5 s)"),
            std::string::npos)
      << errorOf(head + "    motion: {still_detect_interval: 5}\n");
  EXPECT_NE(errorOf(head + "    motion: {threshold: 0}\n")
                .find("cameras[0].motion.threshold: must be between 1 and 254"),
            std::string::npos);
  EXPECT_NE(errorOf(head + "    motion: {treshold: 20}\n").find("cameras[0].motion"),
            std::string::npos);
  EXPECT_NE(errorOf(head + "    motion: {masks: [[[0, 0], [1, 0]]]}\n")
                .find("cameras[0].motion.masks[0]: a polygon needs at least 3 points"),
            std::string::npos);
  EXPECT_NE(errorOf(head + "    motion: yes\n").find("cameras[0].motion"), std::string::npos);
}

TEST(ConfigTest, TheVitisAiRuntimeSettingsAreReadRelativeToTheFile) {
  auto c = parse(
      "version: 1\ndetector:\n  backend: npu\n  onnxruntime: ryzen_ai/onnxruntime/lib\n"
      "  vitisai: {target: X1, xclbin: /opt/voe/4x4.xclbin, cache_dir: cache}\n"
      "cameras:\n  - {name: front, source: /dev/video0}\n");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->detector.vitisai.onnxRuntime, "/etc/vigil/ryzen_ai/onnxruntime/lib");
  EXPECT_EQ(c->detector.vitisai.target, "X1");
  EXPECT_EQ(c->detector.vitisai.xclbin, "/opt/voe/4x4.xclbin");
  EXPECT_EQ(c->detector.vitisai.cacheDir, "/etc/vigil/cache");
  auto defaults = parse(kMinimal);
  ASSERT_TRUE(defaults.has_value());
  EXPECT_EQ(defaults->detector.vitisai, VitisAiSettings{});

  EXPECT_NE(errorOf("version: 1\ndetector:\n  vitisai: {target: X3}\ncameras:\n  - {name: "
                    "f, source: /dev/video0}\n")
                .find("detector.vitisai.target: must be X1 (XDNA: Phoenix, Hawk Point) or X2"),
            std::string::npos);
  EXPECT_NE(errorOf("version: 1\ndetector:\n  vitisai: {cache: /tmp}\ncameras:\n  - {name: "
                    "f, source: /dev/video0}\n")
                .find("cache"),
            std::string::npos);
}

TEST(ConfigTest, SquareInputIsOffByDefaultAndDenoiseIsACameraSetting) {
  auto defaults = parse(kMinimal);
  ASSERT_TRUE(defaults.has_value()) << defaults.error().message;
  EXPECT_FALSE(defaults->detector.squareInput);
  auto square = parse(
      "version: 1\ndetector: {square_input: true}\ncameras:\n  - {name: f, source: /dev/video0}\n");
  ASSERT_TRUE(square.has_value()) << square.error().message;
  EXPECT_TRUE(square->detector.squareInput);
  // `denoise` is a camera's (the detector's section took it once and did nothing with it).
  const std::string error = errorOf(
      "version: 1\ndetector: {denoise: true}\ncameras:\n  - {name: f, source: /dev/video0}\n");
  EXPECT_NE(error.find("detector.denoise: denoise is a camera's setting"), std::string::npos)
      << error;
}

TEST(ConfigTest, TheLogLevelIsInfoByDefaultAndReadFromTheLogSection) {
  auto defaults = parse(kMinimal);
  ASSERT_TRUE(defaults.has_value()) << defaults.error().message;
  EXPECT_EQ(defaults->log.level, spdlog::level::info);
  const std::pair<const char*, spdlog::level::level_enum> levels[] = {
      {"trace", spdlog::level::trace},
      {"debug", spdlog::level::debug},
      {"info", spdlog::level::info},
      {"warn", spdlog::level::warn},
      {"error", spdlog::level::err}};
  for (const auto& [name, level] : levels) {
    auto c = parse(fmt::format("version: 1\nlog:\n  level: {}\ncameras: []\n", name));
    ASSERT_TRUE(c.has_value()) << name << ": " << c.error().message;
    EXPECT_EQ(c->log.level, level) << name;
  }
  auto empty = parse("version: 1\nlog:\ncameras: []\n");
  ASSERT_TRUE(empty.has_value()) << empty.error().message;
  EXPECT_EQ(empty->log.level, spdlog::level::info) << "an empty section is the default";
}

TEST(ConfigTest, ABadLogLevelNamesItsLineAndTheLevels) {
  EXPECT_EQ(errorOf("version: 1\n"
                    "log:\n"
                    "  level: loud\n"
                    "cameras: []\n"),
            "/etc/vigil/cameras.yaml:3:10: log.level: must be trace, debug, info, warn or error, "
            "got 'loud'");
  EXPECT_EQ(errorOf("version: 1\nlog: {level: warning}\ncameras: []\n"),
            "/etc/vigil/cameras.yaml:2:14: log.level: must be trace, debug, info, warn or error, "
            "got 'warning'");
  const std::string typo = errorOf("version: 1\nlog: {levle: debug}\ncameras: []\n");
  EXPECT_NE(typo.find("/etc/vigil/cameras.yaml:2:7: log.levle: unknown key; did you mean 'level'?"),
            std::string::npos)
      << typo;
  const std::string notAMap = errorOf("version: 1\nlog: debug\ncameras: []\n");
  EXPECT_NE(notAMap.find("/etc/vigil/cameras.yaml:2:6: log:"), std::string::npos) << notAMap;
}

TEST(ConfigTest, ShippedExamplesAreValid) {
  for (const char* name : {"cameras.yaml", "demo.yaml"}) {
    auto c = loadConfig(std::filesystem::path(VIGIL_SOURCE_DIR) / "config" / name);
    ASSERT_TRUE(c.has_value()) << name << ": " << c.error().message;
    EXPECT_FALSE(c->cameras.empty()) << name;
    EXPECT_EQ(c->log.level, spdlog::level::info)
        << name << ": a journal holds a few lines a minute";
    // A user who only edits `source` gets the documented defaults: examples that change what
    // is detected (zones, masks) ship commented out, motion gating as a file without the
    // section has it (on).
    auto plain = parse(kMinimal);
    ASSERT_TRUE(plain.has_value()) << plain.error().message;
    for (const CameraConfig& camera : c->cameras) {
      EXPECT_TRUE(camera.zones.empty()) << name;
      EXPECT_TRUE(camera.masks.empty()) << name << ": a shipped mask hides persons";
      EXPECT_EQ(camera.motion, plain->cameras[0].motion) << name;
      EXPECT_EQ(camera.presence, PresenceSettings{}) << name;
      EXPECT_EQ(camera.tracking, TrackingSettings{}) << name;
    }
  }
}

TEST(ConfigTest, MissingFileIsNotFound) {
  TempDir dir;
  auto c = loadConfig(dir.path() / "nope.yaml");
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().code, ErrorCode::kNotFound);
  EXPECT_NE(c.error().message.find("cannot open: No such file or directory"), std::string::npos)
      << c.error().message;
}

TEST(ConfigTest, ADirectoryOrAHugeFileIsRefusedBeforeParsing) {
  TempDir dir;
  auto c = loadConfig(dir.path());
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().message, dir.path().string() + ": is a directory, not a YAML file");
  // A FIFO nobody writes would block the open forever.
  const auto fifo = dir.path() / "cameras.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  c = loadConfig(fifo);
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().message, fifo.string() + ": not a regular file (a FIFO or device)");

  // 50 MB of valid YAML took yaml-cpp 22 s and 4.5 GB: refused at 1 MiB, unread beyond it.
  const auto huge = dir.path() / "huge.yaml";
  {
    std::ofstream out(huge);
    out << "version: 1\ncameras:\n";
    const std::string camera = "  - {name: cam, source: /dev/video0}\n";
    for (std::size_t written = 0; written <= 1024 * 1024; written += camera.size()) out << camera;
  }
  c = loadConfig(huge);
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().message,
            fmt::format("{}: {} bytes, more than the 1024 KiB a configuration or manifest may be "
                        "(they are a few KiB); not read",
                        huge.string(), std::filesystem::file_size(huge)));
}

TEST(ConfigTest, FileSourcesAreRegularFilesAndAMissingOneIsAWarning) {
  TempDir dir;
  std::ofstream(dir.path() / "clip.mp4") << "x";
  std::filesystem::create_directory(dir.path() / "clips");
  std::ofstream(dir.path() / "cameras.yaml") << "version: 1\n"
                                                "cameras:\n"
                                                "  - {name: a, source: 'file:clip.mp4'}\n"
                                                "  - {name: b, source: 'file:later.mp4'}\n";
  auto c = loadConfig(dir.path() / "cameras.yaml");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  ASSERT_EQ(c->warnings.size(), 1U);
  EXPECT_EQ(
      c->warnings[0],
      fmt::format("{}:4:23: cameras[1].source: '{}' does not exist (yet); the camera "
                  "retries until it does",
                  (dir.path() / "cameras.yaml").string(), (dir.path() / "later.mp4").string()));
  std::ofstream(dir.path() / "cameras.yaml") << "version: 1\n"
                                                "cameras:\n"
                                                "  - {name: a, source: 'file:clips'}\n";
  c = loadConfig(dir.path() / "cameras.yaml");
  ASSERT_FALSE(c.has_value());
  EXPECT_NE(c.error().message.find(":3:23: cameras[0].source: '" + (dir.path() / "clips").string() +
                                   "' is not a regular file (a FIFO, device or directory)"),
            std::string::npos)
      << c.error().message;
}

TEST(ConfigTest, APictureSourceIsReadLikeTheSourceAndSharesItsPassword) {
  TempDir dir;
  const auto secret = dir.path() / "door.password";
  std::ofstream(secret) << "pw\n";
  std::filesystem::permissions(secret, std::filesystem::perms(0600));
  std::ofstream(dir.path() / "cameras.yaml")
      << "version: 1\n"
         "cameras:\n"
         "  - name: door\n"
         "    source: 'rtsp://admin@192.0.2.1/sub'\n"
         "    picture_source: 'rtsp://admin@192.0.2.1/main'\n"
         "    password_file: door.password\n"
         "  - {name: yard, source: 'http://192.0.2.2/small.mjpg'}\n";
  auto c = loadConfig(dir.path() / "cameras.yaml");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  const PictureSourceConfig& door = c->cameras[0].picture;
  EXPECT_TRUE(door.enabled());
  EXPECT_EQ(door.source, "rtsp://admin@192.0.2.1/main") << "as written";
  EXPECT_EQ(door.kind, SourceKind::kRtsp);
  EXPECT_EQ(door.location, "rtsp://admin:pw@192.0.2.1/main") << "the camera's password_file";
  EXPECT_EQ(c->cameras[0].location, "rtsp://admin:pw@192.0.2.1/sub");
  EXPECT_FALSE(c->cameras[1].picture.enabled()) << "without picture_source: none";
  EXPECT_TRUE(c->warnings.empty());
}

TEST(ConfigTest, APictureSourceThatCannotServeIsRefusedWhereItIsWritten) {
  EXPECT_EQ(errorOf("version: 1\n"
                    "cameras:\n"
                    "  - name: front\n"
                    "    source: rtsp://192.0.2.1/s\n"
                    "    picture_source: rtsp://192.0.2.1/s\n"),
            "/etc/vigil/cameras.yaml:5:21: cameras[0].picture_source: is the camera's source "
            "itself: leave picture_source out and the pictures come from the detected frames");
  EXPECT_NE(errorOf("version: 1\n"
                    "cameras:\n"
                    "  - {name: front, source: rtsp://192.0.2.1/s, picture_source: /tmp/x.mp4}\n")
                .find("/etc/vigil/cameras.yaml:3:63: cameras[0].picture_source: must be a V4L2 "
                      "device"),
            std::string::npos)
      << "a file needs file:";
  EXPECT_EQ(errorOf("version: 1\n"
                    "cameras:\n"
                    "  - name: front\n"
                    "    source: rtsp://192.0.2.1/sub\n"
                    "    picture_source: rtsp://192.0.2.1/main\n"
                    "    picture_width: 1920\n"),
            "/etc/vigil/cameras.yaml:6:20: cameras[0].picture_width: only a V4L2 picture_source "
            "is asked for a size; network streams and files deliver their own");
  // Two V4L2 devices: both sizes are known here, and their shapes must match.
  const std::string v4l2 =
      "version: 1\n"
      "cameras:\n"
      "  - name: front\n"
      "    source: /dev/video2\n"
      "    width: 640\n"
      "    height: 480\n"
      "    picture_source: /dev/video0\n";
  EXPECT_EQ(errorOf(v4l2),
            "/etc/vigil/cameras.yaml:7:21: cameras[0].picture_source: its pictures (1920x1080, "
            "picture_width x picture_height) and the detect stream's (640x480, width x height) "
            "differ in aspect ratio: boxes found on one could not be drawn on the other; give "
            "both streams the same shape");
  auto sized = parse(v4l2 + "    picture_width: 1600\n    picture_height: 1200\n");
  ASSERT_TRUE(sized.has_value()) << sized.error().message;
  EXPECT_EQ(sized->cameras[0].picture.width, 1600);
  EXPECT_EQ(sized->cameras[0].picture.height, 1200);
}

TEST(ConfigTest, ACameraPasswordFileGoesIntoTheUrlAndNowhereElse) {
  TempDir dir;
  const auto secret = dir.path() / "door.password";
  std::ofstream(secret) << "p@ss word\n";
  std::filesystem::permissions(secret, std::filesystem::perms(0600));
  std::ofstream(dir.path() / "cameras.yaml")
      << "version: 1\n"
         "cameras:\n"
         "  - {name: door, source: 'rtsp://admin@192.0.2.1/s', password_file: door.password}\n";
  auto c = loadConfig(dir.path() / "cameras.yaml");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  const CameraConfig& door = c->cameras[0];
  EXPECT_EQ(door.source, "rtsp://admin@192.0.2.1/s") << "as written";
  EXPECT_EQ(door.location, "rtsp://admin:p%40ss%20word@192.0.2.1/s") << "what is opened";
  EXPECT_EQ(door.passwordFile, secret.string());
  EXPECT_TRUE(c->warnings.empty());

  std::filesystem::permissions(secret, std::filesystem::perms(0644));
  c = loadConfig(dir.path() / "cameras.yaml");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  ASSERT_EQ(c->warnings.size(), 1U);
  EXPECT_NE(c->warnings[0].find("cameras[0].password_file: '" + secret.string() +
                                "' is readable by every user"),
            std::string::npos)
      << c->warnings[0];

  std::ofstream(dir.path() / "cameras.yaml")
      << "version: 1\n"
         "cameras:\n"
         "  - {name: door, source: /dev/video0, password_file: door.password}\n";
  c = loadConfig(dir.path() / "cameras.yaml");
  ASSERT_FALSE(c.has_value());
  EXPECT_NE(c.error().message.find(
                "cameras[0].password_file: only rtsp:// and http(s):// sources take a password"),
            std::string::npos)
      << c.error().message;
}

}  // namespace
}  // namespace vigil
