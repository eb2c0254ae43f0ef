#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "daemon/base/error.h"
#include "daemon/settings/settings.h"

namespace vigil {

// What `vigil doctor` checks of a configuration beyond its syntax: can this box reach what it
// names? Each camera's source (a V4L2 device that opens and captures, a readable file, a
// stream's host answering on its port) and the MQTT broker (a real MQTT connect with the
// configured login and TLS, under a client id of its own so a running daemon keeps its
// session). Nothing is fixed or retried: the daemon retries; this says what it will meet.

struct SetupFinding {
  std::string what;   // "camera door", "mqtt"
  std::string found;  // what was found, one line
  bool ok = false;
};

struct SetupCheckOptions {
  std::chrono::milliseconds timeout{3000};  // per stream host and for the broker
};

std::vector<SetupFinding> checkSetup(const Config& config, const SetupCheckOptions& options = {});

// host:port of a URL (scheme://[user[:password]@]host[:port][/...]), the scheme's port when it
// names none (rtsp 554, rtsps 322, http 80, https 443, mqtt 1883, mqtts 8883); an IPv6 host
// keeps its brackets. kInvalidArgument when there is no host or the scheme is unknown.
struct Endpoint {
  std::string host;
  std::string port;
};
Expected<Endpoint> endpointOf(const std::string& url);

// A TCP connection to host:port completes within `timeout` (every address the name resolves
// to is tried). kUnavailable says why not: the resolver's or the socket's reason, or silence.
Expected<void> tcpReachable(const Endpoint& at, std::chrono::milliseconds timeout);

}  // namespace vigil
