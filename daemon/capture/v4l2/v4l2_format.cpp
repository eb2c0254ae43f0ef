#include "daemon/capture/v4l2/v4l2_format.h"

#include <fmt/format.h>
#include <linux/videodev2.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <string>
#include <vector>

#include "daemon/capture/v4l2/v4l2_devices.h"
#include "daemon/capture/v4l2/v4l2_util.h"
#include "daemon/settings/settings.h"

namespace vigil {

namespace {

using v4l2::errnoText;
using v4l2::intervalToFps;
using v4l2::xioctl;

constexpr std::uint32_t kMaxFormats = 512;
// MJPEG is worth its decode cost from this size on; below it YUYV fits USB 2 bandwidth.
constexpr long kMjpegMinPixels = 1280L * 720L;

// The pixel formats a device offers, in its order.
struct OfferedFormats {
  std::vector<std::uint32_t> formats;
  std::string text;  // "YUYV, MJPG" or "nothing", for error messages

  bool has(std::uint32_t format) const {
    return std::find(formats.begin(), formats.end(), format) != formats.end();
  }
};

Expected<OfferedFormats> enumerateFormats(int fd, const CameraConfig& camera) {
  OfferedFormats offered;
  int lastErrno = EINVAL;
  for (std::uint32_t index = 0; index < kMaxFormats; ++index) {
    v4l2_fmtdesc desc{};
    desc.index = index;
    desc.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    if (xioctl(fd, VIDIOC_ENUM_FMT, &desc) < 0) {
      lastErrno = errno;
      break;
    }
    offered.formats.push_back(desc.pixelformat);
  }
  if (offered.formats.empty() && lastErrno != EINVAL) {
    return makeError(ErrorCode::kUnavailable, "{}: VIDIOC_ENUM_FMT: {}", camera.location,
                     errnoText(lastErrno));
  }
  for (std::uint32_t f : offered.formats) {
    offered.text += (offered.text.empty() ? "" : ", ") + fourccToString(f);
  }
  if (offered.text.empty()) offered.text = "nothing";
  return offered;
}

Expected<std::uint32_t> choosePixelFormat(const OfferedFormats& offered,
                                          const CameraConfig& camera) {
  // Some older webcams call their MJPEG stream 'JPEG'; it decodes the same way.
  const std::uint32_t mjpeg = offered.has(V4L2_PIX_FMT_MJPEG)  ? V4L2_PIX_FMT_MJPEG
                              : offered.has(V4L2_PIX_FMT_JPEG) ? V4L2_PIX_FMT_JPEG
                                                               : 0;
  const bool yuyv = offered.has(V4L2_PIX_FMT_YUYV);
  switch (camera.format) {
    case PixelFormatChoice::kMjpeg:
      if (mjpeg != 0) return mjpeg;
      return makeError(ErrorCode::kUnsupported,
                       "{}: format mjpeg: the device does not offer MJPEG (it offers {})",
                       camera.location, offered.text);
    case PixelFormatChoice::kYuyv:
      if (yuyv) return V4L2_PIX_FMT_YUYV;
      return makeError(ErrorCode::kUnsupported,
                       "{}: format yuyv: the device does not offer YUYV (it offers {})",
                       camera.location, offered.text);
    case PixelFormatChoice::kAuto:
      break;
  }
  const long pixels = static_cast<long>(camera.width) * camera.height;
  if (mjpeg != 0 && pixels >= kMjpegMinPixels) return mjpeg;
  if (yuyv) return V4L2_PIX_FMT_YUYV;
  if (mjpeg != 0) return mjpeg;
  return makeError(ErrorCode::kUnsupported,
                   "{}: the device offers neither MJPEG nor YUYV (it offers {})", camera.location,
                   offered.text);
}

// VIDIOC_S_FMT with the camera's size; fills `format` but for its frame rate.
Expected<void> setPixelFormat(int fd, std::uint32_t pixelFormat, const OfferedFormats& offered,
                              const CameraConfig& camera, spdlog::logger& log, V4l2Format& format) {
  v4l2_format fmt{};
  fmt.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
  fmt.fmt.pix.width = static_cast<std::uint32_t>(camera.width);
  fmt.fmt.pix.height = static_cast<std::uint32_t>(camera.height);
  fmt.fmt.pix.pixelformat = pixelFormat;
  fmt.fmt.pix.field = V4L2_FIELD_NONE;
  if (xioctl(fd, VIDIOC_S_FMT, &fmt) < 0) {
    const int err = errno;
    return makeError(err == EINVAL ? ErrorCode::kUnsupported : ErrorCode::kUnavailable,
                     "{}: VIDIOC_S_FMT {} {}x{}: {}{}", camera.location,
                     fourccToString(pixelFormat), camera.width, camera.height, errnoText(err),
                     err == EBUSY ? " (is another program using the camera?)" : "");
  }
  const v4l2_pix_format& pix = fmt.fmt.pix;
  // Drivers do not refuse a format they lack; they substitute one (vivid answers MJPG with
  // YUYV). Decoding YUYV bytes as JPEG would fail on every frame, so stop here.
  if (pix.pixelformat != pixelFormat) {
    return makeError(ErrorCode::kUnsupported,
                     "{}: asked for {} but the driver set {} (the device offers {})",
                     camera.location, fourccToString(pixelFormat), fourccToString(pix.pixelformat),
                     offered.text);
  }
  if (pix.width == 0 || pix.height == 0 || pix.width > 16384 || pix.height > 16384 ||
      (pixelFormat == V4L2_PIX_FMT_YUYV && pix.width % 2 != 0)) {
    return makeError(ErrorCode::kUnsupported, "{}: the driver set an unusable size {}x{}",
                     camera.location, pix.width, pix.height);
  }
  format.width = static_cast<int>(pix.width);
  format.height = static_cast<int>(pix.height);
  format.pixelFormat = pixelFormat;
  format.bytesPerLine = std::max<std::size_t>(pix.bytesperline, std::size_t{pix.width} * 2);
  if (format.width != camera.width || format.height != camera.height) {
    log.warn("[cam={}] {}: asked for {}x{}, the device delivers {}x{}", camera.name,
             camera.location, camera.width, camera.height, format.width, format.height);
  }
  if (pix.field != V4L2_FIELD_NONE && pix.field != V4L2_FIELD_ANY) {
    log.warn("[cam={}] {}: the device sends interlaced frames (field {})", camera.name,
             camera.location, pix.field);
  }
  return {};
}

// The rate to ask: camera.fps when the configuration sets it, else the lowest the device offers
// at this format and size that still serves detect_fps (frames nobody takes cost USB bandwidth
// and, for MJPEG, the copy out of the driver's buffer).
double rateToAsk(int fd, const CameraConfig& camera, const V4l2Format& format,
                 spdlog::logger& log) {
  if (camera.fpsSet) return camera.fps;
  const V4l2SizeInfo offered = queryFrameRates(fd, format.pixelFormat, format.width, format.height);
  const auto rate = lowestRateCovering(offered, camera.detectFps);
  if (!rate) return camera.fps;
  log.info(
      "[cam={}] {}: asking {:g} fps, the lowest it offers at or above detect_fps {:g} (set "
      "fps to choose)",
      camera.name, camera.location, *rate, camera.detectFps);
  return *rate;
}

// Returns the rate the device will really deliver, 0 when it does not say.
double setFrameRate(int fd, const CameraConfig& camera, const V4l2Format& format,
                    spdlog::logger& log) {
  v4l2_streamparm parm{};
  parm.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
  if (xioctl(fd, VIDIOC_G_PARM, &parm) < 0 ||
      (parm.parm.capture.capability & V4L2_CAP_TIMEPERFRAME) == 0) {
    log.warn("[cam={}] {}: the driver does not let the frame rate be set; it runs at its own",
             camera.name, camera.location);
    return intervalToFps(parm.parm.capture.timeperframe);
  }
  const double asked = rateToAsk(fd, camera, format, log);
  if (asked > 0) {
    parm = {};
    parm.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    parm.parm.capture.timeperframe.numerator = 1000;
    parm.parm.capture.timeperframe.denominator =
        static_cast<std::uint32_t>(std::lround(asked * 1000));
    if (xioctl(fd, VIDIOC_S_PARM, &parm) < 0) {
      log.warn("[cam={}] {}: VIDIOC_S_PARM {:g} fps: {}", camera.name, camera.location, asked,
               errnoText(errno));
    }
  }
  // Read back: drivers clamp to what the size allows (vivid: 25 fps at 640x480).
  parm = {};
  parm.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
  if (xioctl(fd, VIDIOC_G_PARM, &parm) < 0) return 0;
  const double fps = intervalToFps(parm.parm.capture.timeperframe);
  if (asked > 0 && std::abs(fps - asked) > 0.01 * asked) {
    log.warn("[cam={}] {}: asked for {:g} fps, the device delivers {:g} fps", camera.name,
             camera.location, asked, fps);
  }
  return fps;
}

}  // namespace

Expected<V4l2Format> negotiateV4l2Format(int fd, const CameraConfig& camera, spdlog::logger& log) {
  auto offered = enumerateFormats(fd, camera);
  if (!offered) return tl::unexpected(offered.error());
  auto pixelFormat = choosePixelFormat(*offered, camera);
  if (!pixelFormat) return tl::unexpected(pixelFormat.error());
  V4l2Format format;
  if (auto set = setPixelFormat(fd, *pixelFormat, *offered, camera, log, format); !set) {
    return tl::unexpected(set.error());
  }
  format.fps = setFrameRate(fd, camera, format, log);
  return format;
}

}  // namespace vigil
