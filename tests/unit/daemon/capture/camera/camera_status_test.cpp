// A camera's state and last reason (CameraStatus), on their own: the reason kept without the
// URL's password, `up` in the counters while streaming, and one log line per change of state or
// reason.
#include "daemon/capture/camera/camera_status.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/log_capture.h"
#include "tests/occurrences.h"

namespace vigil {
namespace {

TEST(CameraStatusTest, StatesHaveTheNamesTheStatusApiShows) {
  EXPECT_EQ(cameraStateName(CameraState::kStarting), "starting");
  EXPECT_EQ(cameraStateName(CameraState::kStreaming), "streaming");
  EXPECT_EQ(cameraStateName(CameraState::kReconnecting), "reconnecting");
  EXPECT_EQ(cameraStateName(CameraState::kEnded), "ended");
  EXPECT_EQ(cameraStateName(CameraState::kStopped), "stopped");
}

TEST(CameraStatusTest, TheStateAndReasonAreKeptWithoutTheUrlsPassword) {
  CameraCounters counters;
  CameraStatus status("door", counters);
  EXPECT_EQ(status.state(), CameraState::kStopped) << "before anything started it";
  EXPECT_EQ(status.lastError(), "");
  status.set(CameraState::kReconnecting, "rtsp://admin:secret@10.0.0.5/1: Connection refused");
  EXPECT_EQ(status.state(), CameraState::kReconnecting);
  EXPECT_EQ(status.lastError(), "rtsp://admin:***@10.0.0.5/1: Connection refused");
}

TEST(CameraStatusTest, TheCameraIsUpInItsCountersOnlyWhileStreaming) {
  CameraCounters counters;
  CameraStatus status("door", counters);
  status.set(CameraState::kStarting, "opening");
  EXPECT_FALSE(counters.up.load());
  status.set(CameraState::kStreaming, "640x480 MJPG at 30.0 fps");
  EXPECT_TRUE(counters.up.load());
  status.set(CameraState::kReconnecting, "no frame for 5000 ms");
  EXPECT_FALSE(counters.up.load());
  status.set(CameraState::kStreaming, "640x480 MJPG at 30.0 fps");
  status.set(CameraState::kEnded, "end of file");
  EXPECT_FALSE(counters.up.load());
}

TEST(CameraStatusTest, EachChangeOfStateOrReasonIsOneLineAndARepeatIsNone) {
  setLogLevel(spdlog::level::info);
  testing::LogCapture log("capture");
  CameraCounters counters;
  CameraStatus status("door", counters);
  for (int attempt = 0; attempt < 3; ++attempt) {
    status.set(CameraState::kReconnecting, "Connection refused");
  }
  status.set(CameraState::kReconnecting, "Connection timed out");
  status.set(CameraState::kStreaming, "640x480 MJPG at 30.0 fps");
  status.set(CameraState::kStreaming, "640x480 MJPG at 30.0 fps");
  status.set(CameraState::kEnded, "end of file");
  EXPECT_EQ(log.text(),
            "[cam=door] source lost, reconnecting with backoff: Connection refused\n"
            "[cam=door] source lost, reconnecting with backoff: Connection timed out\n"
            "[cam=door] streaming: 640x480 MJPG at 30.0 fps\n"
            "[cam=door] ended: end of file\n");
}

TEST(CameraStatusTest, AStateSetAloneIsNotLoggedAndKeepsTheReason) {
  setLogLevel(spdlog::level::info);
  testing::LogCapture log("capture");
  CameraCounters counters;
  CameraStatus status("door", counters);
  status.set(CameraState::kReconnecting, "Connection refused");
  status.setState(CameraState::kStopped);  // the owner's stop
  EXPECT_EQ(status.state(), CameraState::kStopped);
  EXPECT_EQ(status.lastError(), "Connection refused");
  EXPECT_EQ(testing::occurrences(log.text(), "\n"), 1U) << log.text();
  status.set(CameraState::kReconnecting, "Connection refused");
  EXPECT_EQ(testing::occurrences(log.text(), "reconnecting with backoff: Connection refused"), 2U)
      << "the state changed since the last line\n"
      << log.text();
}

TEST(CameraStatusTest, StartingIsNotALineOfTheInfoLog) {
  setLogLevel(spdlog::level::info);
  testing::LogCapture log("capture");
  CameraCounters counters;
  CameraStatus status("door", counters);
  status.set(CameraState::kStarting, "waiting for the previous capture thread to end");
  EXPECT_EQ(status.lastError(), "waiting for the previous capture thread to end");
  EXPECT_EQ(log.text(), "") << "at debug only";
}

}  // namespace
}  // namespace vigil
