#include "daemon/capture/v4l2_source.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <libv4l2.h>
#include <linux/videodev2.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <filesystem>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "daemon/capture/v4l2_devices.h"
#include "daemon/capture/v4l2_util.h"
#include "daemon/config.h"
#include "daemon/log.h"

namespace vigil {

namespace {

using v4l2::errnoText;
using v4l2::fixedString;
using v4l2::xioctl;

using std::chrono::milliseconds;

// Four buffers: one being converted, one being filled, two spare so a slow conversion does not
// make the driver drop frames.
constexpr std::uint32_t kBufferCount = 4;
constexpr std::uint32_t kMaxFormats = 512;
// MJPEG is worth its decode cost from this size on; below it YUYV fits USB 2 bandwidth.
constexpr long kMjpegMinPixels = 1280L * 720L;

bool isJpeg(std::uint32_t pixelFormat) {
  return pixelFormat == V4L2_PIX_FMT_MJPEG || pixelFormat == V4L2_PIX_FMT_JPEG;
}

// Trailing padding after the end-of-image marker is legal (some webcams zero-fill the rest of
// the buffer), so skip zeros and look for FF D9 near the end.
bool hasJpegEnd(std::span<const std::uint8_t> data) {
  std::size_t end = data.size();
  while (end > 0 && data[end - 1] == 0) --end;
  const std::size_t from = end > 64 ? end - 64 : 0;
  for (std::size_t i = end; i >= from + 2; --i) {
    if (data[i - 2] == 0xFF && data[i - 1] == 0xD9) return true;
  }
  return false;
}

// The picture size a JPEG's frame header (SOF0..SOF15) declares, or nullopt when there is none
// before the scan. Reads the markers the way libjpeg's marker reader does (jdmarker.c: next_marker
// and read_markers), so that the header checked here is the one the decoder will use: bytes
// between segments that start no marker are skipped (libjpeg warns "extraneous bytes"), as are
// FF fill bytes and a stuffed FF 00; RSTn and TEM stand alone without a length; every other
// marker carries its segment's length. Reading an RST's next two bytes as a length would hop
// over the decoder's header to another one further on.
std::optional<cv::Size> jpegDeclaredSize(std::span<const std::uint8_t> data) {
  std::size_t i = 2;  // after FF D8
  while (true) {
    while (i < data.size() && data[i] != 0xFF) ++i;
    while (i < data.size() && data[i] == 0xFF) ++i;
    if (i >= data.size()) return std::nullopt;
    const std::uint8_t marker = data[i++];
    if (marker == 0x00) continue;                                        // FF 00: not a marker
    if ((marker >= 0xD0 && marker <= 0xD7) || marker == 0x01) continue;  // RSTn, TEM
    // A second SOI (libjpeg refuses it), or scan data or the end before any frame header.
    if (marker == 0xD8 || marker == 0xDA || marker == 0xD9) return std::nullopt;
    if (i + 2 > data.size()) return std::nullopt;
    const std::size_t length = (std::size_t{data[i]} << 8) | data[i + 1];
    if (length < 2) return std::nullopt;
    const bool frameHeader =
        marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
    if (frameHeader) {
      // length, precision, height, width
      if (length < 7 || i + 7 > data.size()) return std::nullopt;
      const int height = (data[i + 3] << 8) | data[i + 4];
      const int width = (data[i + 5] << 8) | data[i + 6];
      return cv::Size(width, height);
    }
    i += length;
  }
}

// Colours no camera picture will have in both corners at once (see decodeV4l2Frame).
const cv::Vec3b kMarkFirst(0x5A, 0xA5, 0x3C);
const cv::Vec3b kMarkLast(0xC3, 0x5A, 0xA5);

void markCorners(cv::Mat& image) {
  image.at<cv::Vec3b>(0, 0) = kMarkFirst;
  image.at<cv::Vec3b>(image.rows - 1, image.cols - 1) = kMarkLast;
}

bool cornersMarked(const cv::Mat& image) {
  return image.at<cv::Vec3b>(0, 0) == kMarkFirst &&
         image.at<cv::Vec3b>(image.rows - 1, image.cols - 1) == kMarkLast;
}

class V4l2Source final : public FrameSource {
 public:
  explicit V4l2Source(const CameraConfig& camera) : camera_(camera), log_(logger("capture")) {}
  ~V4l2Source() override { close(); }
  V4l2Source(const V4l2Source&) = delete;
  V4l2Source& operator=(const V4l2Source&) = delete;

  Expected<SourceInfo> open() override {
    close();
    auto info = start();
    if (!info) close();
    return info;
  }

  Expected<void> read(Frame& frame, milliseconds timeout) override {
    if (!streaming_) {
      return makeError(ErrorCode::kUnavailable, "{}: device is not open", camera_.location);
    }
    const auto deadline = SteadyClock::now() + std::max(timeout, milliseconds(0));
    while (true) {
      const auto left = std::chrono::ceil<milliseconds>(deadline - SteadyClock::now());
      pollfd pfd{fd_, POLLIN, 0};
      const int ready = ::poll(
          &pfd, 1, static_cast<int>(std::clamp<milliseconds::rep>(left.count(), 0, INT_MAX)));
      if (ready < 0) {
        if (errno == EINTR) continue;
        return makeError(ErrorCode::kUnavailable, "{}: poll: {}", camera_.location,
                         errnoText(errno));
      }
      if (ready == 0) {
        return makeError(ErrorCode::kTimeout, "{}: no frame within {} ms", camera_.location,
                         timeout.count());
      }
      if ((pfd.revents & POLLNVAL) != 0) {
        return makeError(ErrorCode::kUnavailable, "{}: the device handle is no longer valid",
                         camera_.location);
      }
      // Dequeue even on POLLERR/POLLHUP: DQBUF's errno says what happened (ENODEV: unplugged,
      // EIO: the driver failed), which is what the log line should name.
      v4l2_buffer buf{};
      buf.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
      buf.memory = V4L2_MEMORY_MMAP;
      if (xioctl(fd_, VIDIOC_DQBUF, &buf) == 0) return deliver(buf, frame);
      const int err = errno;
      if (err != EAGAIN) {
        return makeError(ErrorCode::kUnavailable, "{}: capture failed: VIDIOC_DQBUF: {}",
                         camera_.location, errnoText(err));
      }
      if ((pfd.revents & (POLLERR | POLLHUP)) != 0) {
        return makeError(
            ErrorCode::kUnavailable, "{}: capture failed: the device reported {} and has no frame",
            camera_.location,
            (pfd.revents & POLLHUP) != 0 ? "a hang-up (POLLHUP)" : "an error (POLLERR)");
      }
      // Woken without a frame (EAGAIN): wait out the rest of the timeout.
    }
  }

  std::uint64_t framesLost() const override { return lost_; }

  void close() override {
    lastSequence_.reset();  // a new stream numbers its buffers from 0 again
    if (fd_ < 0) return;
    // Best effort from here on: after an unplug every call fails with ENODEV, and the fd must
    // still be released so the node can be reused.
    if (streaming_) {
      int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
      xioctl(fd_, VIDIOC_STREAMOFF, &type);
      streaming_ = false;
    }
    for (const Mapping& mapping : buffers_) v4l2_munmap(mapping.start, mapping.length);
    buffers_.clear();
    if (buffersRequested_) {
      v4l2_requestbuffers req{};
      req.count = 0;
      req.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
      req.memory = V4L2_MEMORY_MMAP;
      xioctl(fd_, VIDIOC_REQBUFS, &req);
      buffersRequested_ = false;
    }
    v4l2_close(fd_);
    fd_ = -1;
    log_->debug("[cam={}] {}: closed", camera_.name, camera_.location);
  }

 private:
  struct Mapping {
    void* start = nullptr;
    std::size_t length = 0;
  };

  Expected<SourceInfo> start() {
    if (camera_.location.empty()) {
      return makeError(ErrorCode::kInvalidArgument, "camera {}: no device path", camera_.name);
    }
    if (auto opened = openDevice(); !opened) return tl::unexpected(opened.error());
    auto pixelFormat = choosePixelFormat();
    if (!pixelFormat) return tl::unexpected(pixelFormat.error());
    if (auto set = setFormat(*pixelFormat); !set) return tl::unexpected(set.error());
    const double fps = setFrameRate();
    if (auto streaming = startStreaming(); !streaming) return tl::unexpected(streaming.error());

    SourceInfo info;
    info.width = width_;
    info.height = height_;
    info.fps = fps;
    info.pixelFormat = fourccToString(pixelFormat_);
    info.description = description_;
    log_->info("[cam={}] {}: {}, {} {}x{} at {} fps, {} buffers", camera_.name, camera_.location,
               description_, info.pixelFormat, width_, height_,
               fps > 0 ? fmt::format("{:g}", fps) : std::string("unknown"), buffers_.size());
    return info;
  }

  Expected<void> openDevice() {
    const std::string& path = camera_.location;
    int fd = v4l2::openNode(path);
    if (fd < 0) {
      const int err = errno;
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
          return makeError(ErrorCode::kUnavailable, "{}: cannot open: {}", path, errnoText(err));
        default:
          return makeError(ErrorCode::kInvalidArgument, "{}: cannot open: {}", path,
                           errnoText(err));
      }
    }
    fd_ = fd;  // close() releases it from here on, whatever fails next

    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode)) {
      return makeError(ErrorCode::kInvalidArgument,
                       "{}: not a video capture device (not a character device)", path);
    }
    // Ask the kernel directly first: libv4l2 prints to stderr when handed a node that is not
    // V4L2 (/dev/null, a serial port), and this way the error is ours.
    v4l2_capability cap{};
    int rc = 0;
    do {
      rc = ::ioctl(fd, VIDIOC_QUERYCAP, &cap);
    } while (rc < 0 && errno == EINTR);
    if (rc < 0) {
      const int err = errno;
      if (err == ENODEV || err == EIO) {
        return makeError(ErrorCode::kUnavailable, "{}: VIDIOC_QUERYCAP: {}", path, errnoText(err));
      }
      return makeError(ErrorCode::kInvalidArgument,
                       "{}: not a video capture device (caps 0x0: VIDIOC_QUERYCAP: {})", path,
                       errnoText(err));
    }
    // libv4l2 gives multi-planar-only drivers a single-planar view. Conversion stays off: we
    // only ask for MJPEG or YUYV and convert ourselves, so the frames are the driver's bytes
    // and ENUM_FMT lists what the hardware really sends. If libv4l2 declines the fd, its
    // calls go straight to the kernel, which still works for single-planar devices.
    if (v4l2_fd_open(fd, V4L2_DISABLE_CONVERSION) < 0) {
      log_->warn("[cam={}] {}: libv4l2 does not take the device ({}); using the kernel interface",
                 camera_.name, path, errnoText(errno));
    }
    cap = {};
    if (xioctl(fd, VIDIOC_QUERYCAP, &cap) < 0) {
      return makeError(ErrorCode::kUnavailable, "{}: VIDIOC_QUERYCAP: {}", path, errnoText(errno));
    }
    const std::uint32_t caps =
        (cap.capabilities & V4L2_CAP_DEVICE_CAPS) != 0 ? cap.device_caps : cap.capabilities;
    if ((caps & V4L2_CAP_VIDEO_CAPTURE) == 0 || (caps & V4L2_CAP_STREAMING) == 0) {
      return makeError(ErrorCode::kInvalidArgument,
                       "{}: not a video capture device (caps {:#010x}{}{})", path, caps,
                       (caps & V4L2_CAP_VIDEO_CAPTURE) == 0 ? ", no VIDEO_CAPTURE" : "",
                       (caps & V4L2_CAP_STREAMING) == 0 ? ", no STREAMING" : "");
    }
    description_ = fmt::format("{} (driver {}, bus {})", fixedString(cap.card),
                               fixedString(cap.driver), fixedString(cap.bus_info));
    std::error_code ec;
    const auto resolved = std::filesystem::canonical(path, ec);
    if (!ec && resolved.string() != path) description_ += fmt::format(", {}", resolved.string());
    return {};
  }

  Expected<std::uint32_t> choosePixelFormat() {
    std::vector<std::uint32_t> offered;
    int lastErrno = EINVAL;
    for (std::uint32_t index = 0; index < kMaxFormats; ++index) {
      v4l2_fmtdesc desc{};
      desc.index = index;
      desc.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
      if (xioctl(fd_, VIDIOC_ENUM_FMT, &desc) < 0) {
        lastErrno = errno;
        break;
      }
      offered.push_back(desc.pixelformat);
    }
    if (offered.empty() && lastErrno != EINVAL) {
      return makeError(ErrorCode::kUnavailable, "{}: VIDIOC_ENUM_FMT: {}", camera_.location,
                       errnoText(lastErrno));
    }
    offered_.clear();
    for (std::uint32_t f : offered) {
      offered_ += (offered_.empty() ? "" : ", ") + fourccToString(f);
    }
    if (offered_.empty()) offered_ = "nothing";
    auto has = [&](std::uint32_t f) {
      return std::find(offered.begin(), offered.end(), f) != offered.end();
    };
    // Some older webcams call their MJPEG stream 'JPEG'; it decodes the same way.
    const std::uint32_t mjpeg = has(V4L2_PIX_FMT_MJPEG)  ? V4L2_PIX_FMT_MJPEG
                                : has(V4L2_PIX_FMT_JPEG) ? V4L2_PIX_FMT_JPEG
                                                         : 0;
    const bool yuyv = has(V4L2_PIX_FMT_YUYV);
    switch (camera_.format) {
      case PixelFormatChoice::kMjpeg:
        if (mjpeg != 0) return mjpeg;
        return makeError(ErrorCode::kUnsupported,
                         "{}: format mjpeg: the device does not offer MJPEG (it offers {})",
                         camera_.location, offered_);
      case PixelFormatChoice::kYuyv:
        if (yuyv) return V4L2_PIX_FMT_YUYV;
        return makeError(ErrorCode::kUnsupported,
                         "{}: format yuyv: the device does not offer YUYV (it offers {})",
                         camera_.location, offered_);
      case PixelFormatChoice::kAuto:
        break;
    }
    const long pixels = static_cast<long>(camera_.width) * camera_.height;
    if (mjpeg != 0 && pixels >= kMjpegMinPixels) return mjpeg;
    if (yuyv) return V4L2_PIX_FMT_YUYV;
    if (mjpeg != 0) return mjpeg;
    return makeError(ErrorCode::kUnsupported,
                     "{}: the device offers neither MJPEG nor YUYV (it offers {})",
                     camera_.location, offered_);
  }

  Expected<void> setFormat(std::uint32_t pixelFormat) {
    v4l2_format fmt{};
    fmt.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    fmt.fmt.pix.width = static_cast<std::uint32_t>(camera_.width);
    fmt.fmt.pix.height = static_cast<std::uint32_t>(camera_.height);
    fmt.fmt.pix.pixelformat = pixelFormat;
    fmt.fmt.pix.field = V4L2_FIELD_NONE;
    if (xioctl(fd_, VIDIOC_S_FMT, &fmt) < 0) {
      const int err = errno;
      return makeError(err == EINVAL ? ErrorCode::kUnsupported : ErrorCode::kUnavailable,
                       "{}: VIDIOC_S_FMT {} {}x{}: {}{}", camera_.location,
                       fourccToString(pixelFormat), camera_.width, camera_.height, errnoText(err),
                       err == EBUSY ? " (is another program using the camera?)" : "");
    }
    const v4l2_pix_format& pix = fmt.fmt.pix;
    // Drivers do not refuse a format they lack; they substitute one (vivid answers MJPG with
    // YUYV). Decoding YUYV bytes as JPEG would fail on every frame, so stop here.
    if (pix.pixelformat != pixelFormat) {
      return makeError(
          ErrorCode::kUnsupported, "{}: asked for {} but the driver set {} (the device offers {})",
          camera_.location, fourccToString(pixelFormat), fourccToString(pix.pixelformat), offered_);
    }
    if (pix.width == 0 || pix.height == 0 || pix.width > 16384 || pix.height > 16384 ||
        (pixelFormat == V4L2_PIX_FMT_YUYV && pix.width % 2 != 0)) {
      return makeError(ErrorCode::kUnsupported, "{}: the driver set an unusable size {}x{}",
                       camera_.location, pix.width, pix.height);
    }
    width_ = static_cast<int>(pix.width);
    height_ = static_cast<int>(pix.height);
    pixelFormat_ = pixelFormat;
    bytesPerLine_ = std::max<std::size_t>(pix.bytesperline, std::size_t{pix.width} * 2);
    if (width_ != camera_.width || height_ != camera_.height) {
      log_->warn("[cam={}] {}: asked for {}x{}, the device delivers {}x{}", camera_.name,
                 camera_.location, camera_.width, camera_.height, width_, height_);
    }
    if (pix.field != V4L2_FIELD_NONE && pix.field != V4L2_FIELD_ANY) {
      log_->warn("[cam={}] {}: the device sends interlaced frames (field {})", camera_.name,
                 camera_.location, pix.field);
    }
    return {};
  }

  // Returns the rate the device will really deliver, 0 when it does not say.
  double setFrameRate() {
    v4l2_streamparm parm{};
    parm.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    if (xioctl(fd_, VIDIOC_G_PARM, &parm) < 0 ||
        (parm.parm.capture.capability & V4L2_CAP_TIMEPERFRAME) == 0) {
      log_->warn("[cam={}] {}: the driver does not let the frame rate be set; it runs at its own",
                 camera_.name, camera_.location);
      return fpsOf(parm.parm.capture.timeperframe);
    }
    if (camera_.fps > 0) {
      parm = {};
      parm.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
      parm.parm.capture.timeperframe.numerator = 1000;
      parm.parm.capture.timeperframe.denominator =
          static_cast<std::uint32_t>(std::lround(camera_.fps * 1000));
      if (xioctl(fd_, VIDIOC_S_PARM, &parm) < 0) {
        log_->warn("[cam={}] {}: VIDIOC_S_PARM {:g} fps: {}", camera_.name, camera_.location,
                   camera_.fps, errnoText(errno));
      }
    }
    // Read back: drivers clamp to what the size allows (vivid: 25 fps at 640x480).
    parm = {};
    parm.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    if (xioctl(fd_, VIDIOC_G_PARM, &parm) < 0) return 0;
    const double fps = fpsOf(parm.parm.capture.timeperframe);
    if (camera_.fps > 0 && std::abs(fps - camera_.fps) > 0.01 * camera_.fps) {
      log_->warn("[cam={}] {}: asked for {:g} fps, the device delivers {:g} fps", camera_.name,
                 camera_.location, camera_.fps, fps);
    }
    return fps;
  }

  static double fpsOf(const v4l2_fract& interval) {
    if (interval.numerator == 0 || interval.denominator == 0) return 0;
    return static_cast<double>(interval.denominator) / interval.numerator;
  }

  Expected<void> startStreaming() {
    v4l2_requestbuffers req{};
    req.count = kBufferCount;
    req.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    req.memory = V4L2_MEMORY_MMAP;
    if (xioctl(fd_, VIDIOC_REQBUFS, &req) < 0) {
      const int err = errno;
      return makeError(ErrorCode::kUnavailable, "{}: VIDIOC_REQBUFS: {}{}", camera_.location,
                       errnoText(err),
                       err == EBUSY ? " (is another program streaming from the camera?)" : "");
    }
    buffersRequested_ = true;
    if (req.count < 2) {
      return makeError(ErrorCode::kUnavailable, "{}: the driver gave {} buffer(s), need 2",
                       camera_.location, req.count);
    }
    buffers_.reserve(req.count);
    const std::size_t yuyvBytes = bytesPerLine_ * static_cast<std::size_t>(height_ - 1) +
                                  static_cast<std::size_t>(width_) * 2;
    for (std::uint32_t index = 0; index < req.count; ++index) {
      v4l2_buffer buf{};
      buf.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
      buf.memory = V4L2_MEMORY_MMAP;
      buf.index = index;
      if (xioctl(fd_, VIDIOC_QUERYBUF, &buf) < 0) {
        return makeError(ErrorCode::kUnavailable, "{}: VIDIOC_QUERYBUF {}: {}", camera_.location,
                         index, errnoText(errno));
      }
      if (pixelFormat_ == V4L2_PIX_FMT_YUYV && buf.length < yuyvBytes) {
        return makeError(ErrorCode::kUnsupported,
                         "{}: buffer of {} bytes is too small for {}x{} YUYV ({} bytes)",
                         camera_.location, buf.length, width_, height_, yuyvBytes);
      }
      void* start = v4l2_mmap(nullptr, buf.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd_,
                              static_cast<std::int64_t>(buf.m.offset));
      if (start == MAP_FAILED) {
        return makeError(ErrorCode::kUnavailable, "{}: mmap of buffer {}: {}", camera_.location,
                         index, errnoText(errno));
      }
      buffers_.push_back({start, buf.length});
    }
    for (std::uint32_t index = 0; index < req.count; ++index) {
      if (auto queued = queue(index); !queued) return queued;
    }
    int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    if (xioctl(fd_, VIDIOC_STREAMON, &type) < 0) {
      return makeError(ErrorCode::kUnavailable, "{}: VIDIOC_STREAMON: {}", camera_.location,
                       errnoText(errno));
    }
    streaming_ = true;
    return {};
  }

  Expected<void> queue(std::uint32_t index) {
    v4l2_buffer buf{};
    buf.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    buf.memory = V4L2_MEMORY_MMAP;
    buf.index = index;
    if (xioctl(fd_, VIDIOC_QBUF, &buf) < 0) {
      return makeError(ErrorCode::kUnavailable, "{}: capture failed: VIDIOC_QBUF (buffer {}): {}",
                       camera_.location, index, errnoText(errno));
    }
    return {};
  }

  Expected<void> deliver(const v4l2_buffer& buf, Frame& frame) {
    if (buf.index >= buffers_.size()) {
      return makeError(ErrorCode::kUnavailable, "{}: the driver returned buffer {} of {}",
                       camera_.location, buf.index, buffers_.size());
    }
    if (lastSequence_) lost_ += v4l2SequenceGap(*lastSequence_, buf.sequence);
    lastSequence_ = buf.sequence;
    const Mapping& mapping = buffers_[buf.index];
    Expected<void> converted;
    if ((buf.flags & V4L2_BUF_FLAG_ERROR) != 0) {
      converted = makeError(ErrorCode::kInvalidData,
                            "{}: corrupt frame (the driver flagged frame {} as damaged)",
                            camera_.location, buf.sequence);
    } else if (buf.bytesused == 0) {
      converted = makeError(ErrorCode::kInvalidData, "{}: corrupt frame (frame {} is empty)",
                            camera_.location, buf.sequence);
    } else {
      const auto* bytes = static_cast<const std::uint8_t*>(mapping.start);
      converted = decodeV4l2Frame(pixelFormat_,
                                  {bytes, std::min<std::size_t>(buf.bytesused, mapping.length)},
                                  width_, height_, bytesPerLine_, frame.image);
      if (!converted) converted.error().message.insert(0, camera_.location + ": ");
    }
    // Hand the buffer back before anything else so the driver never runs out, whatever
    // became of this frame.
    if (auto queued = queue(buf.index); !queued) return queued;
    if (!converted) return converted;
    frame.sequence = buf.sequence;
    frame.captureTime =
        v4l2CaptureTime(buf.flags, buf.timestamp.tv_sec, buf.timestamp.tv_usec, SteadyClock::now());
    return {};
  }

  const CameraConfig camera_;
  std::shared_ptr<spdlog::logger> log_;
  int fd_ = -1;
  bool buffersRequested_ = false;
  bool streaming_ = false;
  std::vector<Mapping> buffers_;
  std::uint32_t pixelFormat_ = 0;
  int width_ = 0;
  int height_ = 0;
  std::size_t bytesPerLine_ = 0;
  std::string description_;
  std::string offered_;  // the device's formats, for error messages
  std::optional<std::uint32_t> lastSequence_;  // of this stream's latest buffer
  std::uint64_t lost_ = 0;
};

}  // namespace

std::unique_ptr<FrameSource> makeV4l2Source(const CameraConfig& camera) {
  return std::make_unique<V4l2Source>(camera);
}

std::uint32_t v4l2SequenceGap(std::uint32_t previous, std::uint32_t current) {
  const std::uint32_t step = current - previous;  // modulo 2^32: a wrap is a small step
  if (step == 0 || step > 0x80000000U) return 0;
  return step - 1;
}

Expected<void> decodeV4l2Frame(std::uint32_t pixelFormat, std::span<const std::uint8_t> data,
                               int width, int height, std::size_t bytesPerLine, cv::Mat& out) {
  try {
    if (isJpeg(pixelFormat)) {
      // Check the markers ourselves: OpenCV decodes a cut-off JPEG into a picture with a grey
      // bottom, and finds no decoder for bytes that do not start FF D8 FF.
      if (data.size() < 4 || data[0] != 0xFF || data[1] != 0xD8 || data[2] != 0xFF) {
        return makeError(ErrorCode::kInvalidData, "corrupt frame: no JPEG start marker");
      }
      if (!hasJpegEnd(data)) {
        return makeError(ErrorCode::kInvalidData,
                         "corrupt frame: JPEG cut short (no end marker, {} bytes)", data.size());
      }
      // A damaged header can declare any size, and the decoder would allocate it (up to 2^30
      // pixels) before finding the rest broken. The stream's negotiated size is the only one a
      // frame of it may have.
      const auto declared = jpegDeclaredSize(data);
      if (!declared) {
        return makeError(ErrorCode::kInvalidData, "corrupt frame: no JPEG frame header");
      }
      if (declared->width != width || declared->height != height) {
        return makeError(ErrorCode::kInvalidData,
                         "corrupt frame: JPEG says {}x{}, the stream is {}x{}", declared->width,
                         declared->height, width, height);
      }
      // When the JPEG header does not parse, imdecode returns without touching `out` and
      // without saying so, which would deliver the previous picture again as a new frame. A
      // decode writes every pixel, so two marked corners that survive mean nothing was decoded.
      const bool marked = !out.empty() && out.type() == CV_8UC3;
      const uchar* storage = out.data;
      const cv::Size size = out.size();
      if (marked) markCorners(out);
      // A header over the driver's buffer: no copy. The Mat* overload decodes into `out`'s
      // storage when the size is unchanged. Webcams write no EXIF orientation, and honouring
      // one would rotate into a new allocation.
      const cv::Mat encoded(1, static_cast<int>(data.size()), CV_8UC1,
                            const_cast<std::uint8_t*>(data.data()));
      cv::imdecode(encoded, cv::IMREAD_COLOR | cv::IMREAD_IGNORE_ORIENTATION, &out);
      if (out.empty() || out.type() != CV_8UC3 ||
          (marked && out.data == storage && out.size() == size && cornersMarked(out))) {
        return makeError(ErrorCode::kInvalidData, "corrupt frame: JPEG does not decode");
      }
      // Should the header read above ever differ from the decoder's, a picture of another size
      // is still not a frame of this stream.
      if (out.cols != width || out.rows != height) {
        return makeError(ErrorCode::kInvalidData,
                         "corrupt frame: JPEG decoded to {}x{}, the stream is {}x{}", out.cols,
                         out.rows, width, height);
      }
      return {};
    }
    if (pixelFormat == V4L2_PIX_FMT_YUYV) {
      if (width <= 0 || height <= 0 || width % 2 != 0 ||
          bytesPerLine < static_cast<std::size_t>(width) * 2) {
        return makeError(ErrorCode::kInvalidArgument, "YUYV frame of unusable size {}x{}", width,
                         height);
      }
      const std::size_t needed =
          bytesPerLine * static_cast<std::size_t>(height - 1) + static_cast<std::size_t>(width) * 2;
      if (data.size() < needed) {
        return makeError(ErrorCode::kInvalidData,
                         "corrupt frame: {} bytes, a {}x{} YUYV picture needs {}", data.size(),
                         width, height, needed);
      }
      const cv::Mat yuyv(height, width, CV_8UC2, const_cast<std::uint8_t*>(data.data()),
                         bytesPerLine);
      out.create(height, width, CV_8UC3);
      cv::cvtColor(yuyv, out, cv::COLOR_YUV2BGR_YUYV);
      return {};
    }
  } catch (const std::exception& e) {  // cv::Exception and anything else OpenCV throws
    return makeError(ErrorCode::kInvalidData, "corrupt frame: {}", e.what());
  }
  return makeError(ErrorCode::kUnsupported, "pixel format {} is not supported",
                   fourccToString(pixelFormat));
}

SteadyClock::time_point v4l2CaptureTime(std::uint32_t bufferFlags, std::int64_t seconds,
                                        std::int64_t microseconds, SteadyClock::time_point now) {
  const bool monotonic =
      (bufferFlags & V4L2_BUF_FLAG_TIMESTAMP_MASK) == V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC;
  if (!monotonic || (seconds == 0 && microseconds == 0)) return now;
  return SteadyClock::time_point(std::chrono::duration_cast<SteadyClock::duration>(
      std::chrono::seconds(seconds) + std::chrono::microseconds(microseconds)));
}

}  // namespace vigil
