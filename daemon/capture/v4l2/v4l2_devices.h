#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace vigil {

// What `vigil cameras` shows, so a user can pick a device path, format, size and rate for
// cameras.yaml without installing v4l-utils.

struct V4l2SizeInfo {
  int width = 0;
  int height = 0;
  // Frame rates offered at this size, in the driver's order. When fpsRange is set the driver
  // offers any interval in a range and the list holds its two ends (fastest first).
  std::vector<double> fps;
  bool fpsRange = false;
};

struct V4l2FormatInfo {
  std::string fourcc;       // "YUYV", "MJPG", ...
  std::string description;  // the driver's text, e.g. "YUYV 4:2:2"
  // Discrete sizes; when sizeRange is set the driver takes any size in a range (stepwise or
  // continuous) and `sizes` holds only the smallest and the largest.
  std::vector<V4l2SizeInfo> sizes;
  bool sizeRange = false;
};

struct V4l2DeviceInfo {
  std::string path;  // as found in the scanned directory, e.g. /dev/video0
  std::string driver, card, busInfo;
  std::uint32_t capabilities = 0;  // device_caps when the driver reports them
  // Usable by vigil: a video capture node with streaming I/O. Other nodes (metadata, output,
  // a second node of the same webcam) are listed with capture = false and no formats.
  bool capture = false;
  std::vector<V4l2FormatInfo> formats;
  // Stable names from udev (/dev/v4l/by-id/..., /dev/v4l/by-path/...) that resolve to this
  // node; better in cameras.yaml than /dev/videoN, whose number can change on replug.
  std::vector<std::string> links;
  std::string error;  // why the node could not be queried (permission denied, not V4L2, ...)
};

// Scans devDir/video<N> in numeric order and queries each node through libv4l2 (without
// format emulation, so the formats are what the hardware sends). Never fails: a node that
// cannot be opened or is not V4L2 is listed with capture = false and `error` set; a missing
// devDir gives an empty list. Links are looked up under devDir/v4l/by-id and by-path.
// Opens each node briefly; safe while another program streams from it.
std::vector<V4l2DeviceInfo> listV4l2Devices(const std::filesystem::path& devDir = "/dev");

// Readable text, one block per device: path, card, driver, bus, stable links, then each
// format with its sizes and frame rates. "no V4L2 devices found in <devDir>" when empty.
std::string formatV4l2Devices(const std::vector<V4l2DeviceInfo>& devices,
                              const std::filesystem::path& devDir = "/dev");

// The frame rates `fd` offers for `pixelFormat` at width x height (VIDIOC_ENUM_FRAMEINTERVALS),
// as `vigil cameras` lists them; empty when the driver does not say.
V4l2SizeInfo queryFrameRates(int fd, std::uint32_t pixelFormat, int width, int height);

// The rate to ask of a camera that needs `needed` frames a second (its detect_fps) and whose
// `fps` the configuration leaves open: the lowest it offers at or above `needed` (a range: needed
// itself, within it), its fastest when none is that fast; nullopt when it offers none.
std::optional<double> lowestRateCovering(const V4l2SizeInfo& offered, double needed);

// "YUYV", "MJPG", "Y10" (trailing blanks dropped), "XR24-BE" for big-endian variants;
// unprintable bytes become '?'.
std::string fourccToString(std::uint32_t fourcc);

}  // namespace vigil
