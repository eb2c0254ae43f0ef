#include "daemon/capture/v4l2/v4l2_devices.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <libv4l2.h>
#include <linux/videodev2.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <map>
#include <system_error>
#include <utility>

#include "daemon/capture/v4l2/v4l2_util.h"

namespace vigil {

namespace {

using v4l2::errnoText;
using v4l2::fixedString;
using v4l2::intervalToFps;
using v4l2::xioctl;

namespace fs = std::filesystem;

// A broken driver can answer every index; no real device has anywhere near this many.
constexpr std::uint32_t kMaxEnumerations = 512;

V4l2SizeInfo querySize(int fd, std::uint32_t pixelFormat, std::uint32_t width,
                       std::uint32_t height) {
  V4l2SizeInfo size;
  size.width = static_cast<int>(width);
  size.height = static_cast<int>(height);
  for (std::uint32_t index = 0; index < kMaxEnumerations; ++index) {
    v4l2_frmivalenum interval{};
    interval.index = index;
    interval.pixel_format = pixelFormat;
    interval.width = width;
    interval.height = height;
    if (xioctl(fd, VIDIOC_ENUM_FRAMEINTERVALS, &interval) < 0) break;
    if (interval.type == V4L2_FRMIVAL_TYPE_DISCRETE) {
      size.fps.push_back(intervalToFps(interval.discrete));
      continue;
    }
    // The shortest interval is the highest rate.
    size.fps = {intervalToFps(interval.stepwise.min), intervalToFps(interval.stepwise.max)};
    size.fpsRange = true;
    break;
  }
  return size;
}

V4l2FormatInfo queryFormat(int fd, const v4l2_fmtdesc& desc) {
  V4l2FormatInfo format;
  format.fourcc = fourccToString(desc.pixelformat);
  format.description = fixedString(desc.description);
  for (std::uint32_t index = 0; index < kMaxEnumerations; ++index) {
    v4l2_frmsizeenum size{};
    size.index = index;
    size.pixel_format = desc.pixelformat;
    if (xioctl(fd, VIDIOC_ENUM_FRAMESIZES, &size) < 0) break;
    if (size.type == V4L2_FRMSIZE_TYPE_DISCRETE) {
      format.sizes.push_back(
          querySize(fd, desc.pixelformat, size.discrete.width, size.discrete.height));
      continue;
    }
    // Stepwise or continuous: thousands of sizes; the two ends tell the user enough.
    const v4l2_frmsize_stepwise& range = size.stepwise;
    format.sizes = {querySize(fd, desc.pixelformat, range.min_width, range.min_height),
                    querySize(fd, desc.pixelformat, range.max_width, range.max_height)};
    format.sizeRange = true;
    break;
  }
  return format;
}

// Fills `info` from an open libv4l2 fd.
void queryDevice(int fd, V4l2DeviceInfo& info) {
  v4l2_capability cap{};
  if (xioctl(fd, VIDIOC_QUERYCAP, &cap) < 0) {
    info.error = fmt::format("VIDIOC_QUERYCAP: {}", errnoText(errno));
    return;
  }
  info.driver = fixedString(cap.driver);
  info.card = fixedString(cap.card);
  info.busInfo = fixedString(cap.bus_info);
  info.capabilities =
      (cap.capabilities & V4L2_CAP_DEVICE_CAPS) != 0 ? cap.device_caps : cap.capabilities;
  info.capture = (info.capabilities & V4L2_CAP_VIDEO_CAPTURE) != 0 &&
                 (info.capabilities & V4L2_CAP_STREAMING) != 0;
  if (!info.capture) return;
  for (std::uint32_t index = 0; index < kMaxEnumerations; ++index) {
    v4l2_fmtdesc desc{};
    desc.index = index;
    desc.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    if (xioctl(fd, VIDIOC_ENUM_FMT, &desc) < 0) break;
    info.formats.push_back(queryFormat(fd, desc));
  }
}

V4l2DeviceInfo probeNode(const fs::path& path) {
  V4l2DeviceInfo info;
  info.path = path.string();
  std::error_code ec;
  // Never open what is not a character device: a stray regular file or FIFO named video0
  // must not be read or block the listing.
  if (fs::status(path, ec).type() != fs::file_type::character) {
    info.error = "not a character device";
    return info;
  }
  int fd = v4l2::openNode(path);
  if (fd < 0) {
    const int err = errno;
    info.error = err == EACCES || err == EPERM
                     ? "permission denied (is the user in the video group?)"
                     : fmt::format("cannot open: {}", errnoText(err));
    return info;
  }
  // Ask the kernel first: libv4l2 prints to stderr when handed a node that is not V4L2.
  v4l2_capability cap{};
  if (v4l2::queryCapabilityDirect(fd, cap) < 0) {
    info.error = fmt::format("not a V4L2 device (VIDIOC_QUERYCAP: {})", errnoText(errno));
    ::close(fd);
    return info;
  }
  // Through libv4l2 a multi-planar-only device shows up as an ordinary capture device, as it
  // does for the capture source. When libv4l2 declines the fd, its calls go straight to the
  // kernel, which is still right.
  v4l2_fd_open(fd, V4L2_DISABLE_CONVERSION);
  queryDevice(fd, info);
  v4l2_close(fd);
  return info;
}

// Maps each device node (canonical path) to the udev links that resolve to it.
std::map<fs::path, std::vector<std::string>> findLinks(const fs::path& devDir) {
  std::map<fs::path, std::vector<std::string>> links;
  for (const char* sub : {"by-id", "by-path"}) {
    std::error_code ec;
    std::vector<fs::path> entries;
    for (fs::directory_iterator it(devDir / "v4l" / sub, ec), end; !ec && it != end;
         it.increment(ec)) {
      entries.push_back(it->path());
    }
    std::sort(entries.begin(), entries.end());
    for (const fs::path& entry : entries) {
      if (!fs::is_symlink(entry, ec)) continue;
      fs::path target = fs::canonical(entry, ec);
      if (!ec) links[target].push_back(entry.string());
    }
  }
  return links;
}

std::string fpsText(double fps) { return fmt::format("{:g}", fps); }

std::string sizeFpsText(const V4l2SizeInfo& size) {
  if (size.fps.empty()) return "";
  if (size.fpsRange) {
    return fmt::format(" @ {} to {} fps", fpsText(size.fps.back()), fpsText(size.fps.front()));
  }
  std::string text = " @ ";
  for (std::size_t i = 0; i < size.fps.size(); ++i) {
    text += (i == 0 ? "" : ", ") + fpsText(size.fps[i]);
  }
  return text + " fps";
}

}  // namespace

V4l2SizeInfo queryFrameRates(int fd, std::uint32_t pixelFormat, int width, int height) {
  return querySize(fd, pixelFormat, static_cast<std::uint32_t>(width),
                   static_cast<std::uint32_t>(height));
}

std::optional<double> lowestRateCovering(const V4l2SizeInfo& offered, double needed) {
  if (offered.fps.empty()) return std::nullopt;
  const auto [slowest, fastest] = std::minmax_element(offered.fps.begin(), offered.fps.end());
  if (offered.fpsRange) return std::clamp(needed, *slowest, *fastest);
  std::optional<double> best;
  for (double fps : offered.fps) {
    if (fps >= needed - 1e-6 && (!best || fps < *best)) best = fps;
  }
  return best ? best : std::optional<double>(*fastest);
}

std::string fourccToString(std::uint32_t fourcc) {
  std::string text;
  for (int shift = 0; shift < 32; shift += 8) {
    // Bit 31 is the big-endian flag, not part of the fourth character.
    auto c = static_cast<unsigned char>((fourcc >> shift) & (shift == 24 ? 0x7F : 0xFF));
    text += c >= 0x20 && c < 0x7F ? static_cast<char>(c) : '?';
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  if ((fourcc & (1U << 31)) != 0) text += "-BE";
  return text;
}

std::vector<V4l2DeviceInfo> listV4l2Devices(const fs::path& devDir) {
  std::vector<std::pair<unsigned long, fs::path>> nodes;
  std::error_code ec;
  for (fs::directory_iterator it(devDir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    constexpr std::string_view kPrefix = "video";
    if (!name.starts_with(kPrefix) || name.size() == kPrefix.size()) continue;
    unsigned long number = 0;
    const char* first = name.data() + kPrefix.size();
    const char* last = name.data() + name.size();
    auto [ptr, err] = std::from_chars(first, last, number);
    if (err != std::errc() || ptr != last) continue;  // "video0p", "video-foo": not ours
    nodes.emplace_back(number, it->path());
  }
  // video2 before video10.
  std::sort(nodes.begin(), nodes.end());

  auto links = findLinks(devDir);
  std::vector<V4l2DeviceInfo> devices;
  devices.reserve(nodes.size());
  for (const auto& node : nodes) {
    V4l2DeviceInfo info = probeNode(node.second);
    fs::path canonical = fs::canonical(node.second, ec);
    if (auto found = links.find(ec ? node.second : canonical); found != links.end()) {
      info.links = found->second;
    }
    devices.push_back(std::move(info));
  }
  return devices;
}

std::string formatV4l2Devices(const std::vector<V4l2DeviceInfo>& devices, const fs::path& devDir) {
  if (devices.empty()) return fmt::format("no V4L2 devices found in {}\n", devDir.string());
  std::string text;
  for (const V4l2DeviceInfo& device : devices) {
    if (!device.error.empty()) {
      text += fmt::format("{}: {}\n", device.path, device.error);
    } else if (!device.capture) {
      text += fmt::format("{}: not a capture device ({}, driver {}, caps {:#010x})\n", device.path,
                          device.card, device.driver, device.capabilities);
    } else {
      text += fmt::format("{}: {} (driver {}, bus {})\n", device.path, device.card, device.driver,
                          device.busInfo);
    }
    for (const std::string& link : device.links) text += fmt::format("  also: {}\n", link);
    if (device.capture && device.error.empty() && device.formats.empty()) {
      text += "  no formats reported\n";
    }
    for (const V4l2FormatInfo& format : device.formats) {
      text += fmt::format("  {:<4} {}\n", format.fourcc, format.description);
      if (format.sizes.empty()) text += "    sizes: not reported\n";
      if (format.sizeRange && format.sizes.size() == 2) {
        const V4l2SizeInfo& low = format.sizes.front();
        const V4l2SizeInfo& high = format.sizes.back();
        text += fmt::format("    any size from {}x{}{}\n", low.width, low.height, sizeFpsText(low));
        text +=
            fmt::format("             to {}x{}{}\n", high.width, high.height, sizeFpsText(high));
        continue;
      }
      for (const V4l2SizeInfo& size : format.sizes) {
        text += fmt::format("    {}x{}{}\n", size.width, size.height, sizeFpsText(size));
      }
    }
  }
  return text;
}

}  // namespace vigil
