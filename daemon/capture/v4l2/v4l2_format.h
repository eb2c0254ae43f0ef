#pragma once

#include <cstddef>
#include <cstdint>

#include "daemon/base/error.h"

namespace spdlog {
class logger;
}

namespace vigil {

struct CameraConfig;

// What the driver really set for a stream (it may differ from what was asked).
struct V4l2Format {
  std::uint32_t pixelFormat = 0;  // V4L2_PIX_FMT_YUYV, _MJPEG or _JPEG
  int width = 0;
  int height = 0;
  std::size_t bytesPerLine = 0;  // of YUYV rows; at least width * 2
  double fps = 0;                // the rate the device will deliver, 0 when it does not say
};

// Format negotiation on an open device (`fd`, borrowed): picks the pixel format from what the
// device offers (camera.format, or auto: MJPEG for 1280x720 and above when offered, since YUYV at
// that size exceeds USB 2 bandwidth on most webcams, otherwise YUYV, otherwise MJPEG), sets it
// with camera.width x camera.height, then asks for camera.fps and reads back what the driver
// made of it. A size or rate the driver adjusts is accepted and logged at warn on `log` (lines
// start "[cam=<name>] <location>: "), as is a device that does not let the rate be set.
// Threads: the camera's capture thread, before streaming starts.
// Failure (never throws): kUnsupported when the asked format is not offered, the driver sets
// another one or an unusable size (the message lists what the device offers); kUnavailable
// when the device fails (ENUM_FMT, S_FMT errors other than EINVAL).
Expected<V4l2Format> negotiateV4l2Format(int fd, const CameraConfig& camera, spdlog::logger& log);

}  // namespace vigil
