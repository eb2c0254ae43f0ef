#include "daemon/mqtt/mqtt_settings.h"

#include <charconv>
#include <filesystem>
#include <string_view>

#include "daemon/mqtt/paho_options.h"

namespace vigil {

namespace {

constexpr std::string_view kPlainUrlScheme = "mqtt://";
constexpr std::string_view kTlsUrlScheme = "mqtts://";

// After the scheme: host[:port] or [v6 address][:port]; a colon must be followed by a port
// between 1 and 65535.
Expected<void> checkMqttAuthority(std::string_view authority, const std::string& url) {
  std::string_view host = authority;
  std::string_view port;
  if (auto close = authority.rfind(']'); authority.starts_with('[')) {
    if (close == std::string_view::npos) {
      return makeError(ErrorCode::kInvalidArgument, "mqtt.url: unbalanced '[' in '{}'", url);
    }
    host = authority.substr(0, close + 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') {
        return makeError(ErrorCode::kInvalidArgument, "mqtt.url: bad port in '{}'", url);
      }
      port = authority.substr(close + 2);
    }
  } else if (auto colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) {
    return makeError(ErrorCode::kInvalidArgument, "mqtt.url: no host in '{}'", url);
  }
  if (authority.find(':') != std::string_view::npos || !port.empty()) {
    int value = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value < 1 ||
        value > 65535) {
      return makeError(ErrorCode::kInvalidArgument,
                       "mqtt.url: port must be between 1 and 65535 in '{}'", url);
    }
  }
  return {};
}

// mqtt://host[:port] or mqtts://host[:port], without credentials or a path.
Expected<void> checkMqttUrl(const std::string& url) {
  const bool tls = isMqttTls(url);
  if (!tls && !url.starts_with(kPlainUrlScheme)) {
    return makeError(ErrorCode::kInvalidArgument,
                     "mqtt.url: unsupported scheme in '{}'; use mqtt://host:port or "
                     "mqtts://host:port",
                     url);
  }
  std::string_view authority =
      std::string_view(url).substr(tls ? kTlsUrlScheme.size() : kPlainUrlScheme.size());
  if (authority.find('@') != std::string_view::npos) {
    // Also keeps credentials out of every log line that names the URL.
    return makeError(ErrorCode::kInvalidArgument,
                     "mqtt.url: credentials in the URL are not supported; use "
                     "mqtt.username and mqtt.password_file");
  }
  if (authority.find('/') != std::string_view::npos) {
    return makeError(ErrorCode::kInvalidArgument, "mqtt.url: '{}' must not have a path", url);
  }
  return checkMqttAuthority(authority, url);
}

// The session's settings: client id, user name with password, QoS and the client's bounds.
Expected<void> checkMqttSession(const MqttSettings& s) {
  if (s.clientId.empty()) {
    return makeError(ErrorCode::kInvalidArgument, "mqtt.client_id: must not be empty");
  }
  if (!s.password.empty() && s.username.empty()) {
    return makeError(ErrorCode::kInvalidArgument,
                     "mqtt.password: set, but mqtt.username is empty (MQTT 3.1.1 forbids a "
                     "password without a user name)");
  }
  if (s.qos < 0 || s.qos > 2) {
    return makeError(ErrorCode::kInvalidArgument, "mqtt.qos: must be 0, 1 or 2, got {}", s.qos);
  }
  if (s.keepAlive.count() < 0) {
    return makeError(ErrorCode::kInvalidArgument, "mqtt.keepalive: must not be negative");
  }
  if (s.bufferMessages == 0) {
    return makeError(ErrorCode::kInvalidArgument, "mqtt.buffer_messages: must be at least 1");
  }
  if (s.minRetry.count() <= 0 || s.maxRetry < s.minRetry) {
    return makeError(ErrorCode::kInvalidArgument, "mqtt retry: need 0 < min ({} ms) <= max ({} ms)",
                     s.minRetry.count(), s.maxRetry.count());
  }
  return {};
}

// The CA, certificate and key files: only with mqtts://, each an existing file, a key only
// with its certificate.
Expected<void> checkMqttTlsFiles(const MqttSettings& s) {
  const std::pair<const char*, const std::string*> files[] = {
      {"mqtt.ca_file", &s.caFile}, {"mqtt.cert_file", &s.certFile}, {"mqtt.key_file", &s.keyFile}};
  for (const auto& [key, path] : files) {
    if (path->empty()) continue;
    if (!isMqttTls(s.url)) {
      return makeError(ErrorCode::kInvalidArgument,
                       "{}: set, but mqtt.url '{}' is not TLS; use mqtts://", key, s.url);
    }
    std::error_code ec;
    if (!std::filesystem::is_regular_file(*path, ec)) {
      return makeError(ErrorCode::kNotFound, "{}: no such file '{}'", key, *path);
    }
  }
  if (!s.keyFile.empty() && s.certFile.empty()) {
    return makeError(ErrorCode::kInvalidArgument, "mqtt.key_file: set without mqtt.cert_file");
  }
  return {};
}

}  // namespace

Expected<void> validateMqttSettings(const MqttSettings& s) {
  if (auto url = checkMqttUrl(s.url); !url) return url;
  if (auto session = checkMqttSession(s); !session) return session;
  return checkMqttTlsFiles(s);
}

}  // namespace vigil
