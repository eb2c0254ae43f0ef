// One V4L2 device node (V4l2Device), on its own, where no camera is: why a node does not open,
// and who holds its fd then. Opening a real device, vivid's, is vm.v4l2_run's (a VM with its
// kernel module); the V4L2 source over it is V4l2SourceTest's.
#include "daemon/capture/v4l2/v4l2_device.h"

#include <gtest/gtest.h>

#include "daemon/base/log.h"
#include "tests/temp_dir.h"

namespace vigil {
namespace {

TEST(V4l2DeviceTest, AMissingNodeIsUnavailableAndNothingIsHeld) {
  TempDir dir;
  const std::string node = (dir.path() / "video7").string();
  V4l2Device device;
  auto opened = device.open(node, "door", *logger("capture"));
  ASSERT_FALSE(opened.has_value());
  EXPECT_EQ(opened.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(opened.error().message, node + ": no such device");
  EXPECT_FALSE(device.isOpen());
  EXPECT_EQ(device.fd(), -1);
}

TEST(V4l2DeviceTest, AFileIsNotACaptureDeviceAndItsFdIsHeldUntilClosed) {
  TempDir dir;
  const auto file = dir.path() / "video0";
  writeFile(file, "not a camera");
  V4l2Device device;
  auto opened = device.open(file.string(), "door", *logger("capture"));
  ASSERT_FALSE(opened.has_value());
  EXPECT_EQ(opened.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(opened.error().message,
            file.string() + ": not a video capture device (not a character device)");
  EXPECT_TRUE(device.isOpen()) << "failed half-way: close() releases it";
  EXPECT_GE(device.fd(), 0);
  EXPECT_EQ(device.description(), "");
  device.close();
  EXPECT_FALSE(device.isOpen());
  EXPECT_EQ(device.fd(), -1);
  device.close();  // nothing when not open
  EXPECT_FALSE(device.isOpen());
}

TEST(V4l2DeviceTest, ACharacterDeviceThatIsNotV4l2IsNotACaptureDevice) {
  V4l2Device device;
  auto opened = device.open("/dev/null", "door", *logger("capture"));
  ASSERT_FALSE(opened.has_value());
  EXPECT_EQ(opened.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(opened.error().message.rfind("/dev/null: not a video capture device (caps 0x0: "
                                         "VIDIOC_QUERYCAP: ENOTTY",
                                         0),
            0U)
      << opened.error().message;
  device.close();
}

}  // namespace
}  // namespace vigil
