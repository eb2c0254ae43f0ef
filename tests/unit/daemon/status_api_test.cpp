#include "daemon/observe/status_api.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

using namespace std::chrono_literals;

CameraSnapshot camera(const std::string& name, CameraState state = CameraState::kStreaming) {
  CameraSnapshot c;
  c.name = name;
  c.source = "file:/clips/" + name + ".mp4";
  c.state = state;
  c.up = state == CameraState::kStreaming;
  return c;
}

DaemonSnapshot healthyDaemon() {
  DaemonSnapshot s;
  s.detectorLoaded = true;
  s.backend.name = "cpu";
  s.backend.device = "OpenCV DNN";
  s.enabledCameras = {"door", "yard"};
  s.cameras = {camera("door"), camera("yard", CameraState::kReconnecting)};
  return s;
}

TEST(StatusApiTest, HealthNamesEveryThreadPastItsDeadline) {
  DaemonSnapshot s = healthyDaemon();
  HttpResponse ok = healthResponse(s);
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(ok.body, "ok\n");
  s.workerOverdue = 2500ms;
  s.cameras[1].captureOverdue = 1s;
  HttpResponse late = healthResponse(s);
  EXPECT_EQ(late.status, 503);
  EXPECT_EQ(late.body,
            "inference worker: no sign of life, 2.5 s past its deadline\n"
            "[cam=yard] capture thread: no sign of life, 1.0 s past its deadline\n");
}

TEST(StatusApiTest, ReadyOnlyWithTheDetectorLoadedAndEveryEnabledCameraStarted) {
  DaemonSnapshot s = healthyDaemon();
  HttpResponse ready = readinessResponse(s);
  EXPECT_EQ(ready.status, 200);
  EXPECT_EQ(ready.body,
            "detector: ready (cpu on OpenCV DNN)\n[cam=door] started, streaming\n"
            "[cam=yard] started, reconnecting\n");
  s.cameras.pop_back();
  HttpResponse missing = readinessResponse(s);
  EXPECT_EQ(missing.status, 503);
  EXPECT_NE(missing.body.find("[cam=yard] not started\n"), std::string::npos) << missing.body;
  s = healthyDaemon();
  s.detectorLoaded = false;
  HttpResponse noDetector = readinessResponse(s);
  EXPECT_EQ(noDetector.status, 503);
  EXPECT_EQ(noDetector.body.rfind("detector: not loaded\n", 0), 0U) << noDetector.body;
}

TEST(StatusApiTest, StatusDocumentSaysNullForWhatIsAbsent) {
  DaemonSnapshot s = healthyDaemon();
  s.cameras[1].lastError = "connection refused";
  s.cameras[0].frames.captured = 7;
  s.cameras[0].frames.decodeErrors = 1;
  s.cameras[0].lastPerson = std::chrono::system_clock::time_point{} + 1'700'000'000s;
  nlohmann::json j = statusJson(s);
  EXPECT_TRUE(j["mqtt"].is_null()) << "no mqtt section";
  ASSERT_EQ(j["cameras"].size(), 2U);
  EXPECT_TRUE(j["cameras"][0]["last_error"].is_null());
  EXPECT_EQ(j["cameras"][1]["last_error"], "connection refused");
  EXPECT_EQ(j["cameras"][0]["frames"]["captured"], 7);
  EXPECT_EQ(j["cameras"][0]["frames"]["decode_errors"], 1);
  EXPECT_EQ(j["cameras"][0]["last_person"], "2023-11-14T22:13:20.000Z");
  EXPECT_TRUE(j["cameras"][1]["last_person"].is_null());
  s.mqtt = MqttSnapshot{"mqtt://broker:1883", true, 3, 0, 1, 0, ""};
  j = statusJson(s);
  EXPECT_EQ(j["mqtt"]["url"], "mqtt://broker:1883");
  EXPECT_EQ(j["mqtt"]["buffered"], 1);
  EXPECT_TRUE(j["mqtt"]["last_error"].is_null());
}

}  // namespace
}  // namespace vigil
