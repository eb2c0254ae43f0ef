#include "daemon/capture/v4l2/v4l2_device.h"

#include <fmt/format.h>
#include <libv4l2.h>
#include <linux/videodev2.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <system_error>

#include "daemon/capture/v4l2/v4l2_util.h"

namespace vigil {

namespace {

// Why a device node did not open: kUnavailable for what may pass (unplugged, busy, out of
// handles), kInvalidArgument for the rest.
tl::unexpected<Error> v4l2OpenFailure(const std::string& path, int err) {
  switch (err) {
    case ENOENT:
      return makeError(ErrorCode::kUnavailable, "{}: no such device", path);
    case EACCES:
    case EPERM:
      return makeError(ErrorCode::kUnavailable,
                       "{}: permission denied (is the user in the video group?)", path);
    case ENODEV:
    case ENXIO:
    case EBUSY:
    case EIO:
    case EAGAIN:
    case ENOMEM:
    case EMFILE:
    case ENFILE:
      return makeError(ErrorCode::kUnavailable, "{}: cannot open: {}", path, v4l2::errnoText(err));
    default:
      return makeError(ErrorCode::kInvalidArgument, "{}: cannot open: {}", path,
                       v4l2::errnoText(err));
  }
}

}  // namespace

Expected<void> V4l2Device::open(const std::string& path, const std::string& cameraName,
                                spdlog::logger& log) {
  const int fd = v4l2::openNode(path);
  if (fd < 0) return v4l2OpenFailure(path, errno);
  fd_ = fd;  // close() releases it from here on, whatever fails next

  if (auto checked = checkCharacterDevice(path); !checked) return checked;
  // libv4l2 gives multi-planar-only drivers a single-planar view. Conversion stays off: we
  // only ask for MJPEG or YUYV and convert ourselves, so the frames are the driver's bytes
  // and ENUM_FMT lists what the hardware really sends. If libv4l2 declines the fd, its
  // calls go straight to the kernel, which still works for single-planar devices.
  if (v4l2_fd_open(fd_, V4L2_DISABLE_CONVERSION) < 0) {
    log.warn("[cam={}] {}: libv4l2 does not take the device ({}); using the kernel interface",
             cameraName, path, v4l2::errnoText(errno));
  }
  return checkCaptureCapabilities(path);
}

void V4l2Device::close() {
  if (fd_ < 0) return;
  v4l2_close(fd_);
  fd_ = -1;
}

Expected<void> V4l2Device::checkCharacterDevice(const std::string& path) {
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISCHR(st.st_mode)) {
    return makeError(ErrorCode::kInvalidArgument,
                     "{}: not a video capture device (not a character device)", path);
  }
  // Ask the kernel directly first: libv4l2 prints to stderr when handed a node that is not
  // V4L2 (/dev/null, a serial port), and this way the error is ours.
  v4l2_capability cap{};
  if (v4l2::queryCapabilityDirect(fd_, cap) < 0) {
    const int err = errno;
    if (err == ENODEV || err == EIO) {
      return makeError(ErrorCode::kUnavailable, "{}: VIDIOC_QUERYCAP: {}", path,
                       v4l2::errnoText(err));
    }
    return makeError(ErrorCode::kInvalidArgument,
                     "{}: not a video capture device (caps 0x0: VIDIOC_QUERYCAP: {})", path,
                     v4l2::errnoText(err));
  }
  return {};
}

Expected<void> V4l2Device::checkCaptureCapabilities(const std::string& path) {
  v4l2_capability cap{};
  if (v4l2::xioctl(fd_, VIDIOC_QUERYCAP, &cap) < 0) {
    return makeError(ErrorCode::kUnavailable, "{}: VIDIOC_QUERYCAP: {}", path,
                     v4l2::errnoText(errno));
  }
  const std::uint32_t caps =
      (cap.capabilities & V4L2_CAP_DEVICE_CAPS) != 0 ? cap.device_caps : cap.capabilities;
  if ((caps & V4L2_CAP_VIDEO_CAPTURE) == 0 || (caps & V4L2_CAP_STREAMING) == 0) {
    return makeError(ErrorCode::kInvalidArgument,
                     "{}: not a video capture device (caps {:#010x}{}{})", path, caps,
                     (caps & V4L2_CAP_VIDEO_CAPTURE) == 0 ? ", no VIDEO_CAPTURE" : "",
                     (caps & V4L2_CAP_STREAMING) == 0 ? ", no STREAMING" : "");
  }
  description_ = fmt::format("{} (driver {}, bus {})", v4l2::fixedString(cap.card),
                             v4l2::fixedString(cap.driver), v4l2::fixedString(cap.bus_info));
  std::error_code ec;
  const auto resolved = std::filesystem::canonical(path, ec);
  if (!ec && resolved.string() != path) description_ += fmt::format(", {}", resolved.string());
  return {};
}

}  // namespace vigil
