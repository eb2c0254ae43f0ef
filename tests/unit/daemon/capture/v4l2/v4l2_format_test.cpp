// Format negotiation (negotiateV4l2Format), on its own, where no camera is: a handle that is not a
// V4L2 device fails at the first question, as a device that fails does. Negotiating with a real
// device, vivid's (its formats, a size or rate it adjusts), is vm.v4l2_run's (a VM with its
// kernel module).
#include "daemon/capture/v4l2/v4l2_format.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "daemon/base/log.h"
#include "daemon/settings/settings.h"

namespace vigil {
namespace {

TEST(V4l2FormatTest, AHandleThatFailsToListItsFormatsIsUnavailable) {
  const int fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  CameraConfig camera;
  camera.name = "door";
  camera.location = "/dev/video0";
  auto format = negotiateV4l2Format(fd, camera, *logger("capture"));
  ::close(fd);
  ASSERT_FALSE(format.has_value());
  EXPECT_EQ(format.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(format.error().message.rfind("/dev/video0: VIDIOC_ENUM_FMT: ENOTTY", 0), 0U)
      << format.error().message;
}

}  // namespace
}  // namespace vigil
