#pragma once

#include <memory>
#include <string>
#include <vector>

#include "daemon/base/error.h"
#include "daemon/config/web_config.h"

namespace vigil {

// Builds the OpenSSL server context of one `tls_server_config`, one setting at a time, so that the
// reader can say which key a failure belongs to. Errors carry OpenSSL's reason, e.g.
// "cannot load the private key from /etc/vigil/vigil.key: key values mismatch". Control thread
// only (start-up and reload); the finished context is shared, read-only, by the connections.
class TlsContextBuilder {
 public:
  TlsContextBuilder();  // TLS server, TLS 1.2 to 1.3, no compression, no renegotiation
  ~TlsContextBuilder();
  TlsContextBuilder(const TlsContextBuilder&) = delete;
  TlsContextBuilder& operator=(const TlsContextBuilder&) = delete;

  // PEM: the certificate followed by its chain. From a file, or text (inline `cert`).
  Expected<void> certificateFile(const std::string& path);
  Expected<void> certificate(const std::string& pem);
  // PEM; checked against the certificate, which must come first.
  Expected<void> privateKeyFile(const std::string& path);
  Expected<void> privateKey(const std::string& pem);
  // The CAs client certificates are verified against, and whether a client must show one.
  Expected<void> clientCaFile(const std::string& path);
  Expected<void> clientAuth(ClientAuth policy);
  // "TLS10" .. "TLS13", as exporter-toolkit spells them.
  Expected<void> versions(const std::string& min, const std::string& max);
  // TLS 1.2 suites by their IANA names (TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, ...).
  Expected<void> cipherSuites(const std::vector<std::string>& names, bool preferServerOrder);
  // Go's curve names: CurveP256, CurveP384, CurveP521, X25519.
  Expected<void> curves(const std::vector<std::string>& names);

  // The context; the builder is empty afterwards. Fails without a certificate and key.
  Expected<std::shared_ptr<boost::asio::ssl::context>> finish();

 private:
  std::shared_ptr<boost::asio::ssl::context> context_;
  bool haveCertificate_ = false;
  bool haveKey_ = false;
};

// The versions the TLS_ names mean (TLS10 .. TLS13), for errors and documentation.
const std::vector<std::string>& tlsVersionNames();

}  // namespace vigil
