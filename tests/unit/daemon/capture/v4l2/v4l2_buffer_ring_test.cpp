// A V4L2 stream's mapped buffers (V4l2BufferRing), on their own, where no camera is: a handle
// whose driver refuses the buffers fails the start with the device's location, nothing streams,
// and release() after it (or before any start) is safe. Streaming from a real device, vivid's,
// is vm.v4l2_run's (a VM with its kernel module).
#include "daemon/capture/v4l2/v4l2_buffer_ring.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "daemon/capture/v4l2/v4l2_format.h"

namespace vigil {
namespace {

TEST(V4l2BufferRingTest, NothingStartedIsNothingToRelease) {
  V4l2BufferRing ring;
  EXPECT_FALSE(ring.streaming());
  EXPECT_EQ(ring.size(), 0U);
  ring.release();
  EXPECT_FALSE(ring.streaming());
}

TEST(V4l2BufferRingTest, ADriverRefusingTheBuffersFailsTheStartAndNothingStreams) {
  const int fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  V4l2Format format;
  format.pixelFormat = V4L2_PIX_FMT_YUYV;
  format.width = 640;
  format.height = 480;
  format.bytesPerLine = 1280;
  V4l2BufferRing ring;
  auto started = ring.start(fd, format, "/dev/video0");
  ASSERT_FALSE(started.has_value());
  EXPECT_EQ(started.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(started.error().message.rfind("/dev/video0: VIDIOC_REQBUFS: ENOTTY", 0), 0U)
      << started.error().message;
  EXPECT_FALSE(ring.streaming());
  EXPECT_EQ(ring.size(), 0U);
  ring.release();  // after a failure, as the source does
  EXPECT_FALSE(ring.streaming());
  ::close(fd);
}

}  // namespace
}  // namespace vigil
