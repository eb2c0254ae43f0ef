#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace boost::asio::ssl {
class context;
}  // namespace boost::asio::ssl

namespace vigil {

// Who must show a client certificate, with exporter-toolkit's names (NoClientCert, ...).
enum class ClientAuth { kNone, kRequest, kRequireAny, kVerifyIfGiven, kRequireAndVerify };

// `tls_server_config`: what the file said, paths made absolute against the file's directory.
struct TlsServerConfig {
  std::string certFile;  // or certPem (inline `cert`)
  std::string keyFile;   // or keyPem (inline `key`)
  std::string certPem;
  std::string keyPem;
  std::string clientCaFile;
  ClientAuth clientAuth = ClientAuth::kNone;
  std::string minVersion = "TLS12";
  std::string maxVersion = "TLS13";
  std::vector<std::string> cipherSuites;  // IANA names, as Go spells them; empty: OpenSSL's
  bool preferServerCipherSuites = true;
  std::vector<std::string> curvePreferences;  // CurveP256, CurveP384, CurveP521, X25519
};

// A web configuration file in the format of Prometheus' exporter-toolkit (the file behind
// node_exporter's --web.config.file; docs/http-security.md), so that a Prometheus user writes
// and scrapes it as for any exporter:
//
//   tls_server_config: {cert_file: vigil.crt, key_file: vigil.key}
//   basic_auth_users: {prometheus: $2y$10$...}
//   http_server_config: {headers: {Strict-Transport-Security: max-age=31536000}}
//
// Same keys, same meaning; relative paths are relative to the file. What Vigil does not implement
// (client_allowed_sans, http2: true) is refused by name, an unknown key is an error, and every
// error says file:line:col. Loading also builds the TLS context, so a certificate that does not
// load or does not match its key is an error of the file, found by check-config.
struct WebConfig {
  std::filesystem::path file;
  std::optional<TlsServerConfig> tls;
  std::map<std::string, std::string> basicAuthUsers;  // user -> bcrypt hash ($2a$, $2b$, $2y$)
  std::vector<std::pair<std::string, std::string>> headers;  // added to every response
  // Built from `tls` and checked; null without TLS. Shared by the connections made with it.
  std::shared_ptr<boost::asio::ssl::context> tlsContext;
  // What the configuration read: the file and the certificate, key and CA files it names; when
  // one of them changes the file is read again (a renewed certificate needs no restart).
  std::vector<std::filesystem::path> sources() const;
  // Secrets that other local users can read, e.g. "web.yml:3:12: tls_server_config.key_file:
  // /etc/vigil/vigil.key can be read by every user on this machine ...".
  std::vector<std::string> warnings;
};

}  // namespace vigil
