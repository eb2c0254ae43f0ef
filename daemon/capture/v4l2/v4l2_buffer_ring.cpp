#include "daemon/capture/v4l2/v4l2_buffer_ring.h"

#include <fmt/format.h>
#include <libv4l2.h>
#include <poll.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <climits>

#include "daemon/capture/frame/frame.h"
#include "daemon/capture/v4l2/v4l2_format.h"
#include "daemon/capture/v4l2/v4l2_util.h"

namespace vigil {

namespace {

using v4l2::errnoText;
using v4l2::xioctl;

// Four buffers: one being converted, one being filled, two spare so a slow conversion does not
// make the driver drop frames.
constexpr std::uint32_t kBufferCount = 4;

// poll's timeout for what is left until `deadline`, never negative.
int pollTimeoutUntil(SteadyClock::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - SteadyClock::now());
  return static_cast<int>(std::clamp<std::chrono::milliseconds::rep>(left.count(), 0, INT_MAX));
}

}  // namespace

Expected<void> V4l2BufferRing::start(int fd, const V4l2Format& format,
                                     const std::string& location) {
  fd_ = fd;
  location_ = location;
  auto count = requestBuffers();
  if (!count) return tl::unexpected(count.error());
  if (auto mapped = mapBuffers(*count, format); !mapped) return mapped;
  for (std::uint32_t index = 0; index < *count; ++index) {
    if (auto queued = requeue(index); !queued) return queued;
  }
  int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
  if (xioctl(fd_, VIDIOC_STREAMON, &type) < 0) {
    return makeError(ErrorCode::kUnavailable, "{}: VIDIOC_STREAMON: {}", location_,
                     errnoText(errno));
  }
  streaming_ = true;
  return {};
}

Expected<std::uint32_t> V4l2BufferRing::requestBuffers() {
  v4l2_requestbuffers req{};
  req.count = kBufferCount;
  req.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
  req.memory = V4L2_MEMORY_MMAP;
  if (xioctl(fd_, VIDIOC_REQBUFS, &req) < 0) {
    const int err = errno;
    return makeError(ErrorCode::kUnavailable, "{}: VIDIOC_REQBUFS: {}{}", location_, errnoText(err),
                     err == EBUSY ? " (is another program streaming from the camera?)" : "");
  }
  requested_ = true;
  if (req.count < 2) {
    return makeError(ErrorCode::kUnavailable, "{}: the driver gave {} buffer(s), need 2", location_,
                     req.count);
  }
  return req.count;
}

Expected<void> V4l2BufferRing::mapBuffers(std::uint32_t count, const V4l2Format& format) {
  mappings_.reserve(count);
  const std::size_t yuyvBytes = format.bytesPerLine * static_cast<std::size_t>(format.height - 1) +
                                static_cast<std::size_t>(format.width) * 2;
  for (std::uint32_t index = 0; index < count; ++index) {
    v4l2_buffer buf{};
    buf.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    buf.memory = V4L2_MEMORY_MMAP;
    buf.index = index;
    if (xioctl(fd_, VIDIOC_QUERYBUF, &buf) < 0) {
      return makeError(ErrorCode::kUnavailable, "{}: VIDIOC_QUERYBUF {}: {}", location_, index,
                       errnoText(errno));
    }
    if (format.pixelFormat == V4L2_PIX_FMT_YUYV && buf.length < yuyvBytes) {
      return makeError(ErrorCode::kUnsupported,
                       "{}: buffer of {} bytes is too small for {}x{} YUYV ({} bytes)", location_,
                       buf.length, format.width, format.height, yuyvBytes);
    }
    void* start = v4l2_mmap(nullptr, buf.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd_,
                            static_cast<std::int64_t>(buf.m.offset));
    if (start == MAP_FAILED) {
      return makeError(ErrorCode::kUnavailable, "{}: mmap of buffer {}: {}", location_, index,
                       errnoText(errno));
    }
    mappings_.push_back({start, buf.length});
  }
  return {};
}

Expected<v4l2_buffer> V4l2BufferRing::dequeue(std::chrono::milliseconds timeout, int stopFd) {
  const auto deadline = SteadyClock::now() + std::max(timeout, std::chrono::milliseconds(0));
  while (true) {
    pollfd fds[2] = {{fd_, POLLIN, 0}, {stopFd, POLLIN, 0}};
    pollfd& pfd = fds[0];
    const int ready = ::poll(fds, 2, pollTimeoutUntil(deadline));
    if (ready < 0) {
      if (errno == EINTR) continue;
      return makeError(ErrorCode::kUnavailable, "{}: poll: {}", location_, errnoText(errno));
    }
    if (ready == 0) {
      return makeError(ErrorCode::kTimeout, "{}: no frame within {} ms", location_,
                       timeout.count());
    }
    if (pfd.revents == 0) {
      return makeError(ErrorCode::kTimeout, "{}: interrupted (stopping)", location_);
    }
    if ((pfd.revents & POLLNVAL) != 0) {
      return makeError(ErrorCode::kUnavailable, "{}: the device handle is no longer valid",
                       location_);
    }
    // Dequeue even on POLLERR/POLLHUP: DQBUF's errno says what happened (ENODEV: unplugged,
    // EIO: the driver failed), which is what the log line should name.
    v4l2_buffer buf{};
    buf.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    buf.memory = V4L2_MEMORY_MMAP;
    if (xioctl(fd_, VIDIOC_DQBUF, &buf) == 0) {
      if (buf.index >= mappings_.size()) {
        return makeError(ErrorCode::kUnavailable, "{}: the driver returned buffer {} of {}",
                         location_, buf.index, mappings_.size());
      }
      return buf;
    }
    const int err = errno;
    if (err != EAGAIN) {
      return makeError(ErrorCode::kUnavailable, "{}: capture failed: VIDIOC_DQBUF: {}", location_,
                       errnoText(err));
    }
    if ((pfd.revents & (POLLERR | POLLHUP)) != 0) {
      return makeError(ErrorCode::kUnavailable,
                       "{}: capture failed: the device reported {} and has no frame", location_,
                       (pfd.revents & POLLHUP) != 0 ? "a hang-up (POLLHUP)" : "an error (POLLERR)");
    }
    // Woken without a frame (EAGAIN): wait out the rest of the timeout.
  }
}

std::span<const std::uint8_t> V4l2BufferRing::bytes(const v4l2_buffer& buffer) const {
  const Mapping& mapping = mappings_[buffer.index];
  return {static_cast<const std::uint8_t*>(mapping.start),
          std::min<std::size_t>(buffer.bytesused, mapping.length)};
}

Expected<void> V4l2BufferRing::requeue(std::uint32_t index) {
  v4l2_buffer buf{};
  buf.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
  buf.memory = V4L2_MEMORY_MMAP;
  buf.index = index;
  if (xioctl(fd_, VIDIOC_QBUF, &buf) < 0) {
    return makeError(ErrorCode::kUnavailable, "{}: capture failed: VIDIOC_QBUF (buffer {}): {}",
                     location_, index, errnoText(errno));
  }
  return {};
}

void V4l2BufferRing::release() {
  if (streaming_) {
    int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    xioctl(fd_, VIDIOC_STREAMOFF, &type);
    streaming_ = false;
  }
  for (const Mapping& mapping : mappings_) v4l2_munmap(mapping.start, mapping.length);
  mappings_.clear();
  if (requested_) {
    v4l2_requestbuffers req{};
    req.count = 0;
    req.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    req.memory = V4L2_MEMORY_MMAP;
    xioctl(fd_, VIDIOC_REQBUFS, &req);
    requested_ = false;
  }
  fd_ = -1;
}

}  // namespace vigil
