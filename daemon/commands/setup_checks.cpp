#include "daemon/commands/setup_checks.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <thread>

#include "daemon/base/log.h"
#include "daemon/capture/camera/picture_stream.h"
#include "daemon/capture/ffmpeg/ffmpeg_decoder.h"
#include "daemon/capture/ffmpeg/ffmpeg_reader.h"
#include "daemon/capture/v4l2/v4l2_device.h"
#include "daemon/mqtt/mqtt_client.h"
#include "daemon/mqtt/publishing.h"

namespace vigil {

namespace {

struct DefaultPort {
  std::string_view scheme;
  std::string_view port;
};
constexpr DefaultPort kDefaultPorts[] = {{"rtsp", "554"},  {"rtsps", "322"}, {"http", "80"},
                                         {"https", "443"}, {"mqtt", "1883"}, {"mqtts", "8883"}};

// Closes a descriptor when it goes out of scope.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// The daemon's own open of the node (V4l2Device: a character device, V4L2, capture with
// streaming I/O), so doctor says what `vigil run` would meet, in its words.
SetupFinding checkV4l2(const CameraConfig& camera) {
  SetupFinding f{"camera " + camera.name, "v4l2 ", false};
  V4l2Device device;
  auto opened = device.open(camera.location, camera.name, *logger("camera"));
  if (!opened) {
    f.found += "NOT USABLE: " + opened.error().message;
    return f;
  }
  f.found += fmt::format("{}: {} opens for capture", camera.location, device.description());
  f.ok = true;
  return f;
}

SetupFinding checkFile(const CameraConfig& camera) {
  SetupFinding f{"camera " + camera.name, "file " + camera.location + ": ", false};
  std::error_code ec;
  if (!std::filesystem::is_regular_file(camera.location, ec)) {
    f.found += std::filesystem::exists(camera.location, ec) ? "NOT A FILE" : "ABSENT";
  } else if (::access(camera.location.c_str(), R_OK) != 0) {
    f.found += fmt::format("NOT READABLE ({})", std::strerror(errno));
  } else {
    f.found +=
        fmt::format("readable, {:.1f} MB",
                    static_cast<double>(std::filesystem::file_size(camera.location, ec)) / 1e6);
    f.ok = true;
  }
  return f;
}

SetupFinding checkStream(const CameraConfig& camera, const SetupCheckOptions& options) {
  SetupFinding f{"camera " + camera.name, std::string(sourceKindName(camera.kind)) + " ", false};
  auto at = endpointOf(camera.location);
  if (!at) {
    f.found += at.error().message;
    return f;
  }
  f.found += at->host + ":" + at->port + ": ";
  auto reached = tcpReachable(*at, options.timeout);
  f.found += reached ? "answers (TCP; the stream itself is opened when vigil runs)"
                     : "UNREACHABLE: " + reached.error().message;
  f.ok = reached.has_value();
  return f;
}

// hwaccel vaapi: the device FFmpeg would open for the camera's decoder.
SetupFinding checkHwDecode(const CameraConfig& camera) {
  SetupFinding f{"camera " + camera.name, "hwaccel vaapi, ", false};
  auto probed = probeVaapi(camera.hwDecode.device);
  if (probed) {
    f.found += camera.hwDecode.device +
               " opens (H.264/H.265 decoded on the GPU when the stream's "
               "codec and profile allow)";
    f.ok = true;
  } else {
    f.found += "NOT USABLE: " + probed.error().message + "; the camera decodes in software";
  }
  return f;
}

// A real MQTT connect with the configured login and TLS, as another client.
SetupFinding checkMqtt(const MqttConfig& config, const SetupCheckOptions& options) {
  SetupFinding f{"mqtt", config.url + ": ", false};
  MqttSettings settings = mqttSettings(config);
  settings.clientId += "-doctor";  // the broker would end a running daemon's session otherwise
  settings.willTopic.clear();
  // The client's own "retrying" lines would contradict the one-shot answer below.
  const auto log = logger("mqtt");
  const auto level = log->level();
  log->set_level(spdlog::level::off);
  MqttClient client(settings);
  client.start();
  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  std::string error;
  while (!client.connected() && (error = client.lastError()).empty() &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (client.connected()) {
    f.found += fmt::format("connected{} (as {})",
                           config.username.empty() ? "" : " with user " + config.username,
                           settings.clientId);
    f.ok = true;
  } else {
    f.found += error.empty() ? fmt::format("NO ANSWER within {} s",
                                           std::chrono::duration<double>(options.timeout).count())
                             : "NOT CONNECTED: " + error;
  }
  client.stop("", "");
  log->set_level(level);
  return f;
}

// Whether the camera's source (device, file or stream) opens.
SetupFinding checkSource(const CameraConfig& camera, const SetupCheckOptions& options) {
  switch (camera.kind) {
    case SourceKind::kV4l2:
      return checkV4l2(camera);
    case SourceKind::kFile:
      return checkFile(camera);
    case SourceKind::kRtsp:
    case SourceKind::kHttp:
      break;
  }
  return checkStream(camera, options);
}

}  // namespace

std::vector<SetupFinding> checkSetup(const Config& config, const SetupCheckOptions& options) {
  std::vector<SetupFinding> findings;
  for (const CameraConfig& camera : config.cameras) {
    if (!camera.enabled) {
      findings.push_back({"camera " + camera.name, "disabled (enabled: false): not checked", true});
      continue;
    }
    findings.push_back(checkSource(camera, options));
    // Its picture stream (picture_source), named "camera <name>/picture".
    if (camera.picture.enabled())
      findings.push_back(checkSource(pictureCameraConfig(camera), options));
    if (camera.kind != SourceKind::kV4l2 && camera.hwDecode.accel == HwAccel::kVaapi) {
      findings.push_back(checkHwDecode(camera));
    }
  }
  if (config.mqtt.enabled) findings.push_back(checkMqtt(config.mqtt, options));
  return findings;
}

Expected<Endpoint> endpointOf(const std::string& url) {
  const auto schemeEnd = url.find("://");
  if (schemeEnd == std::string::npos) {
    return makeError(ErrorCode::kInvalidArgument, "not a URL (scheme://host...)");
  }
  const std::string_view scheme = std::string_view(url).substr(0, schemeEnd);
  std::string_view authority = std::string_view(url).substr(schemeEnd + 3);
  authority = authority.substr(0, authority.find_first_of("/?#"));
  if (auto at = authority.rfind('@'); at != std::string_view::npos) {
    authority = authority.substr(at + 1);  // the user and password stay out of every message
  }
  Endpoint out;
  std::string_view port;
  if (authority.starts_with('[')) {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) {
      return makeError(ErrorCode::kInvalidArgument, "an IPv6 host without its closing ]");
    }
    out.host = std::string(authority.substr(0, close + 1));
    if (authority.size() > close + 1 && authority[close + 1] == ':') {
      port = authority.substr(close + 2);
    }
  } else {
    const auto colon = authority.rfind(':');
    out.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (out.host.empty() || out.host == "[]") {
    return makeError(ErrorCode::kInvalidArgument, "no host in the URL");
  }
  if (port.empty()) {
    for (const DefaultPort& d : kDefaultPorts) {
      if (d.scheme == scheme) port = d.port;
    }
    if (port.empty()) {
      return makeError(ErrorCode::kInvalidArgument, "no port, and {}:// has no default", scheme);
    }
  }
  out.port = std::string(port);
  return out;
}

Expected<void> tcpReachable(const Endpoint& at, std::chrono::milliseconds timeout) {
  // getaddrinfo wants an IPv6 literal without its brackets.
  std::string host = at.host;
  if (host.starts_with('[')) host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), at.port.c_str(), &hints, &found); rc != 0) {
    return makeError(ErrorCode::kUnavailable, "{} does not resolve ({})", at.host,
                     ::gai_strerror(rc));
  }
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addresses(found, ::freeaddrinfo);
  std::string why = "no address";
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    Fd socket{
        ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol)};
    if (socket.fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    int error = ::connect(socket.fd, a->ai_addr, a->ai_addrlen) == 0 ? 0 : errno;
    if (error == EINPROGRESS) {
      pollfd p{socket.fd, POLLOUT, 0};
      const int ready = ::poll(&p, 1, static_cast<int>(timeout.count()));
      if (ready <= 0) {
        why = fmt::format("no answer within {} s", std::chrono::duration<double>(timeout).count());
        continue;
      }
      socklen_t length = sizeof error;
      ::getsockopt(socket.fd, SOL_SOCKET, SO_ERROR, &error, &length);
    }
    if (error == 0) return {};
    why = std::strerror(error);
  }
  return makeError(ErrorCode::kUnavailable, "{}", why);
}

}  // namespace vigil
