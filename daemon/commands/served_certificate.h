#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "daemon/commands/setup_checks.h"
#include "daemon/settings/settings.h"

namespace vigil {

// What `vigil doctor` says of the certificate the HTTP server serves (http.web_config's
// tls_server_config; its key was matched when the configuration was read): whether its names
// (subjectAltName only, as Prometheus and every Go client read it: the Common Name is ignored)
// cover the listen address, or this machine's names and addresses when it listens on every
// address (one of them suffices; the others are listed); how many days it has left (a warning under
// kExpiryWarningDays, not ready once expired or not yet valid); and which CA a scraper needs as its
// ca_file. No findings without TLS.
inline constexpr int kExpiryWarningDays = 14;

struct ServedCertificateOptions {
  std::vector<std::string> hostNames;  // this machine's names and addresses (localNames())
  std::chrono::system_clock::time_point now = std::chrono::system_clock::now();
};

std::vector<SetupFinding> checkServedCertificate(const HttpConfig& http,
                                                 const ServedCertificateOptions& options);

// This machine's host name, its fully qualified name when the resolver knows one, and its
// interfaces' addresses (loopback and link-local excluded): what a client may connect to.
std::vector<std::string> localNames();

}  // namespace vigil
