#include "daemon/settings/settings.h"

namespace vigil {

bool sameAspectRatio(int width, int height, int otherWidth, int otherHeight) {
  if (width <= 0 || height <= 0 || otherWidth <= 0 || otherHeight <= 0) return false;
  const double ratio =
      static_cast<double>(width) * otherHeight / (static_cast<double>(height) * otherWidth);
  return ratio > 0.99 && ratio < 1.0 / 0.99;
}

std::string_view sourceKindName(SourceKind kind) {
  switch (kind) {
    case SourceKind::kV4l2:
      return "v4l2";
    case SourceKind::kRtsp:
      return "rtsp";
    case SourceKind::kHttp:
      return "http";
    case SourceKind::kFile:
      return "file";
  }
  return "unknown";
}

std::string_view pixelFormatName(PixelFormatChoice format) {
  switch (format) {
    case PixelFormatChoice::kAuto:
      return "auto";
    case PixelFormatChoice::kMjpeg:
      return "mjpeg";
    case PixelFormatChoice::kYuyv:
      return "yuyv";
  }
  return "unknown";
}

std::string_view regionsModeName(RegionsConfig::Mode mode) {
  switch (mode) {
    case RegionsConfig::Mode::kAuto:
      return "auto";
    case RegionsConfig::Mode::kOn:
      return "on";
    case RegionsConfig::Mode::kOff:
      return "off";
  }
  return "unknown";
}

std::optional<RegionsConfig::Mode> regionsModeNamed(std::string_view name) {
  for (auto mode :
       {RegionsConfig::Mode::kAuto, RegionsConfig::Mode::kOn, RegionsConfig::Mode::kOff}) {
    if (regionsModeName(mode) == name) return mode;
  }
  return std::nullopt;
}

std::string_view hwAccelName(HwAccel accel) { return accel == HwAccel::kVaapi ? "vaapi" : "none"; }

std::string HttpConfig::listenHost() const {
  std::string host = listen.substr(0, listen.rfind(':'));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return host;
}

bool HttpConfig::listensOnLoopback() const {
  const std::string host = listenHost();
  return host == "localhost" || host.starts_with("127.") || host == "::1";
}

bool HttpConfig::listensOnEveryAddress() const {
  const std::string host = listenHost();
  return host.empty() || host == "0.0.0.0" || host == "::";
}

std::vector<std::string> zoneNames(const CameraConfig& camera) {
  std::vector<std::string> names;
  for (const ZoneSpec& zone : camera.zones) names.push_back(zone.name);
  return names;
}

}  // namespace vigil
