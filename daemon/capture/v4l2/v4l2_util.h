#pragma once

// Small helpers shared by the V4L2 source and the device listing.

#include <fcntl.h>
#include <fmt/format.h>
#include <libv4l2.h>
#include <linux/videodev2.h>
#include <sys/ioctl.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <system_error>

namespace vigil::v4l2 {

// An ioctl through libv4l2, repeated when a signal interrupts it.
inline int xioctl(int fd, unsigned long request, void* arg) {
  int rc = 0;
  do {
    rc = v4l2_ioctl(fd, request, arg);
  } while (rc < 0 && errno == EINTR);
  return rc;
}

// VIDIOC_QUERYCAP straight to the kernel, not through libv4l2 (which prints to stderr when
// handed a node that is not V4L2), repeated when a signal interrupts it. Returns 0, or -1 with
// errno set.
inline int queryCapabilityDirect(int fd, v4l2_capability& cap) {
  int rc = 0;
  do {
    rc = ::ioctl(fd, VIDIOC_QUERYCAP, &cap);
  } while (rc < 0 && errno == EINTR);
  return rc;
}

// Opens a device node for streaming (non-blocking, not inherited), repeated when a signal
// interrupts it. Returns the fd, or -1 with errno set.
inline int openNode(const std::string& path) {
  int fd = -1;
  do {
    fd = ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

// "ENODEV (No such device)": the name for searching, the text for reading.
inline std::string errnoText(int err) {
  const char* name = strerrorname_np(err);
  return fmt::format("{} ({})", name != nullptr ? name : fmt::format("errno {}", err),
                     std::generic_category().message(err));
}

// Frames per second of a frame interval (seconds per frame); 0 when the driver left it empty.
inline double intervalToFps(const v4l2_fract& interval) {
  if (interval.numerator == 0 || interval.denominator == 0) return 0;
  return static_cast<double>(interval.denominator) / interval.numerator;
}

// The kernel fills these fixed-size fields NUL-terminated, but a driver that fills the whole
// array must not make us read past it.
template <std::size_t N>
std::string fixedString(const std::uint8_t (&text)[N]) {
  const auto* begin = reinterpret_cast<const char*>(text);
  return {begin, std::find(begin, begin + N, '\0')};
}

}  // namespace vigil::v4l2
