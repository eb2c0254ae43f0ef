// Fuzzes the TLS side of the HTTP server: a real HttpServer with TLS (OpenSSL through Beast) gets
// each input as the raw bytes of one connection: ClientHellos malformed, truncated or oversize,
// plain HTTP, garbage. It must answer (400 to plain HTTP) or close, never crash, hang or leak, and
// serve the next connection. The certificate is a fixed self-signed one (nothing verifies it).
#include <string>

#include "daemon/config/tls_context.h"
#include "tests/fuzz/fuzz_http_server.h"

namespace {

const char* const kCertificate = R"(
-----BEGIN CERTIFICATE-----
MIIBgTCCASegAwIBAgIUXoXwMwO088Wt1uEcU9DDkMr26dgwCgYIKoZIzj0EAwIw
FTETMBEGA1UEAwwKdmlnaWwtZnV6ejAgFw0yNjEyMDQwODUyNThaGA8yMTI2MTEx
MDA4NTI1OFowFTETMBEGA1UEAwwKdmlnaWwtZnV6ejBZMBMGByqGSM49AgEGCCqG
SM49AwEHA0IABLY7X6hF9PWg2VK7Jt3q18fWbIOt8WFF4Py5oLCtlsMa/d/70eGS
G4KNUBPG4eHa1J+EOqHEvdQ6hHupWYzZb8ejUzBRMB0GA1UdDgQWBBSLgj2cKKL0
ifpFI2jJBvOlv5FsJTAfBgNVHSMEGDAWgBSLgj2cKKL0ifpFI2jJBvOlv5FsJTAP
BgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0gAMEUCIHWmiAwtcA/MiHtbM4eL
Z1vLDki7mksrJ3aCCeQpO3+HAiEA4WIjnpdmN7U0wxgLV7KTOHxUn6ucLZEu1aC/
9Oz6+ps=
-----END CERTIFICATE-----
)";

const char* const kKey = R"(
-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgxgWKoiiWSBhtr33U
JIEOwd2KiZAwhqdE7cMgaEsbMdOhRANCAAS2O1+oRfT1oNlSuybd6tfH1myDrfFh
ReD8uaCwrZbDGv3f+9HhkhuCjVATxuHh2tSfhDqhxL3UOoR7qVmM2W/H
-----END PRIVATE KEY-----
)";

void setUp(vigil::HttpServer& server) {
  vigil::fuzz::addMetricsRoute(server);
  vigil::TlsContextBuilder tls;
  auto context =
      tls.certificate(kCertificate).and_then([&] { return tls.privateKey(kKey); }).and_then([&] {
        return tls.finish();
      });
  if (!context) {
    std::fprintf(stderr, "tls fuzzer: %s\n", context.error().message.c_str());
    std::abort();
  }
  vigil::HttpSecurity security;
  security.tls = *context;
  server.setSecurity(std::move(security));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static vigil::fuzz::FuzzHttpServer server(setUp);
  vigil::fuzz::exchange(server.port(), data, size);
  return 0;
}
