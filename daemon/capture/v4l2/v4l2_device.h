#pragma once

#include <string>

#include "daemon/base/error.h"

namespace spdlog {
class logger;
}

namespace vigil {

// One V4L2 device node, opened for capture: the fd, checked to be a video capture device with
// streaming I/O and handed to libv4l2 (format conversion off, so the frames are the driver's
// bytes), and its description for logs and SourceInfo.
// Ownership: owns the fd from open() until close() or destruction, also when open() failed
// half-way (call close() then); V4l2Format and V4l2BufferRing borrow it.
// Threads: its camera's capture thread only.
// Failure (open(), never throws):
//  - kUnavailable when the node is missing ("<path>: no such device"), not accessible
//    ("permission denied (is the user in the video group?)"), busy, or gone (ENODEV, EIO);
//  - kInvalidArgument "<path>: not a video capture device (...)" for a node that is not V4L2
//    or has no capture/streaming capability, and "<path>: cannot open: ..." for other errors.
class V4l2Device {
 public:
  V4l2Device() = default;
  ~V4l2Device() { close(); }
  V4l2Device(const V4l2Device&) = delete;
  V4l2Device& operator=(const V4l2Device&) = delete;

  // Opens `path` (a /dev/videoN node or a udev link to one); `cameraName` and `log` are for the
  // warning when libv4l2 declines the device (the kernel interface is used then). The device
  // must not be open.
  Expected<void> open(const std::string& path, const std::string& cameraName, spdlog::logger& log);
  // Closes the fd (through libv4l2); nothing when not open. Stop streaming and release the
  // buffers first (V4l2BufferRing::release()).
  void close();

  bool isOpen() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  // "<card> (driver <driver>, bus <bus>)", then ", <resolved path>" when `path` is a link.
  const std::string& description() const { return description_; }

 private:
  Expected<void> checkCharacterDevice(const std::string& path);
  Expected<void> checkCaptureCapabilities(const std::string& path);

  int fd_ = -1;
  std::string description_;
};

}  // namespace vigil
