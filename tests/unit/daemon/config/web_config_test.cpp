#include "daemon/config/web_config.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "daemon/config/config_file.h"
#include "daemon/web/http_logins.h"
#include "tests/temp_dir.h"
#include "tests/test_pki.h"

namespace vigil {
namespace {

// A hash made by htpasswd -nBC 10 (Apache's own bcrypt), for the password "vigil-test".
constexpr const char* kHtpasswdHash =
    "$2y$10$.oZODMi1Lpu18vzXx6tP1u35h8kILEAjsF.wU.wKW7d840o4DjqdO";

class WebConfigTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(pki_.generate()); }

  std::filesystem::path write(const std::string& text) {
    const auto file = dir_.path() / "web-config.yml";
    std::ofstream(file) << text;
    return file;
  }
  std::string errorOf(const std::string& text) {
    auto web = loadWebConfig(write(text));
    EXPECT_FALSE(web.has_value()) << text;
    return web ? std::string() : web.error().message;
  }
  std::string tlsLines() const {
    return "tls_server_config:\n  cert_file: pki/server.crt\n  key_file: pki/server.key\n";
  }

  TempDir dir_;
  testing::TestPki pki_{dir_.path() / "pki"};
};

TEST_F(WebConfigTest, ReadsExporterToolkitsKeysWithPathsBesideTheFile) {
  auto web = loadWebConfig(write(tlsLines() +
                                 "  client_ca_file: pki/ca.crt\n"
                                 "  client_auth_type: VerifyClientCertIfGiven\n"
                                 "  min_version: TLS13\n"
                                 "  curve_preferences: [X25519, CurveP256]\n"
                                 "basic_auth_users:\n"
                                 "  prometheus: " +
                                 std::string(kHtpasswdHash) +
                                 "\n"
                                 "http_server_config:\n"
                                 "  http2: false\n"
                                 "  headers:\n"
                                 "    X-Frame-Options: deny\n"
                                 "    Strict-Transport-Security: max-age=31536000\n"));
  ASSERT_TRUE(web.has_value()) << web.error().message;
  ASSERT_TRUE(web->tls.has_value());
  EXPECT_EQ(web->tls->certFile, pki_.serverCert()) << "relative to the web config's directory";
  EXPECT_EQ(web->tls->clientAuth, ClientAuth::kVerifyIfGiven);
  EXPECT_EQ(web->tls->minVersion, "TLS13");
  EXPECT_NE(web->tlsContext, nullptr);
  EXPECT_EQ(web->basicAuthUsers.at("prometheus"), kHtpasswdHash);
  ASSERT_EQ(web->headers.size(), 2U);
  EXPECT_EQ(web->headers[0], (std::pair<std::string, std::string>{"X-Frame-Options", "deny"}));
  EXPECT_EQ(web->sources().size(), 4U) << "the file, the certificate, the key and the CA";
}

TEST_F(WebConfigTest, AnHtpasswdHashVerifiesItsPasswordAndNoOther) {
  HttpLogins logins(std::map<std::string, std::string>{{"prometheus", kHtpasswdHash}});
  EXPECT_TRUE(logins.verify({"prometheus", "vigil-test"}));
  EXPECT_FALSE(logins.verify({"prometheus", "vigil-Test"}));
  EXPECT_FALSE(logins.verify({"grafana", "vigil-test"})) << "an unknown user";
}

TEST_F(WebConfigTest, AnEmptyFileMeansNoTlsAndNoLogins) {
  auto web = loadWebConfig(write(""));
  ASSERT_TRUE(web.has_value()) << web.error().message;
  EXPECT_FALSE(web->tls);
  EXPECT_TRUE(web->basicAuthUsers.empty());
}

TEST_F(WebConfigTest, MistakesAreErrorsWithFileLineAndColumn) {
  const std::string f = (dir_.path() / "web-config.yml").string();
  EXPECT_EQ(errorOf("basic_auth_user:\n  a: b\n"),
            f + ":1:1: basic_auth_user: unknown key; did you mean 'basic_auth_users'? (allowed "
                "here: tls_server_config, "
                "http_server_config, basic_auth_users)");
  EXPECT_EQ(errorOf("basic_auth_users:\n  admin: secret\n"),
            f + ":2:10: basic_auth_users.admin: not a bcrypt hash ($2y$10$ and 53 more "
                "characters): make one with `vigil passwd admin` or `htpasswd -nBC 10 admin`");
  EXPECT_EQ(errorOf(tlsLines() + "  min_version: TLS14\n"),
            f + ":4:16: tls_server_config: 'TLS14' is not a TLS version (one of TLS10, TLS11, "
                "TLS12, TLS13)");
  EXPECT_EQ(errorOf("tls_server_config:\n  cert_file: pki/server.crt\n"),
            f + ":2:3: tls_server_config: give exactly one of key_file and key");
  EXPECT_EQ(errorOf(tlsLines() + "  client_ca_file: pki/ca.crt\n"),
            f + ":4:19: tls_server_config.client_ca_file: client CAs are configured without a "
                "client_auth_type (as exporter-toolkit, this is refused: say which clients must "
                "show a certificate)");
  EXPECT_EQ(errorOf(tlsLines() + "  cipher_suites: [TLS_RSA_WITH_RC4_128_SHA]\n"),
            f + ":4:18: tls_server_config.cipher_suites: 'TLS_RSA_WITH_RC4_128_SHA' is not a "
                "cipher suite this OpenSSL offers (IANA names such as "
                "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)");
  EXPECT_EQ(errorOf("http_server_config:\n  headers:\n    Server: nginx\n"),
            f + ":3:5: http_server_config.headers.Server: not a header this file may set (one "
                "of Strict-Transport-Security, X-Content-Type-Options, X-Frame-Options, "
                "X-XSS-Protection, Content-Security-Policy)");
}

TEST_F(WebConfigTest, KeysVigilDoesNotImplementAreRefusedByName) {
  const std::string f = (dir_.path() / "web-config.yml").string();
  EXPECT_EQ(errorOf(tlsLines() + "  client_allowed_sans: [a.example]\n"),
            f + ":4:24: tls_server_config.client_allowed_sans: not implemented by Vigil; remove "
                "it (client certificates are verified against client_ca_file only)");
  EXPECT_EQ(errorOf("http_server_config:\n  http2: true\n"),
            f + ":2:10: http_server_config.http2: Vigil serves HTTP/1.1 only; remove the key or "
                "set it to false");
}

TEST_F(WebConfigTest, ACertificateThatIsNotTheKeysIsAnErrorOfTheKey) {
  testing::TestPki other(dir_.path() / "other", "other");
  ASSERT_TRUE(other.generate());
  const std::string error = errorOf(
      "tls_server_config:\n  cert_file: pki/server.crt\n"
      "  key_file: other/server.key\n");
  EXPECT_NE(error.find(":3:13: tls_server_config.key_file: cannot load the private key from " +
                       other.serverKey() + ": key values mismatch"),
            std::string::npos)
      << error;
  const std::string missing = errorOf(
      "tls_server_config:\n  cert_file: pki/absent.crt\n"
      "  key_file: pki/server.key\n");
  EXPECT_NE(missing.find(":2:14: tls_server_config.cert_file: cannot load the certificate from " +
                         (dir_.path() / "pki/absent.crt").string()),
            std::string::npos)
      << missing;
}

TEST_F(WebConfigTest, AKeyEveryUserCanReadIsAWarning) {
  ASSERT_EQ(::chmod(pki_.serverKey().c_str(), 0644), 0);
  auto web = loadWebConfig(write(tlsLines()));
  ASSERT_TRUE(web.has_value()) << web.error().message;
  ASSERT_EQ(web->warnings.size(), 1U);
  EXPECT_NE(web->warnings[0].find("tls_server_config.key_file: " + pki_.serverKey() +
                                  " can be read by every user on this machine (mode 0644)"),
            std::string::npos)
      << web->warnings[0];
}

TEST_F(WebConfigTest, CamerasYamlNamesTheFileAndCheckConfigFindsItsErrors) {
  write("basic_auth_users:\n  admin: secret\n");
  const std::string cameras =
      "version: 1\nhttp:\n  listen: 0.0.0.0:9842\n  web_config: "
      "web-config.yml\ncameras:\n  - {name: a, source: /dev/video0}\n";
  auto config = parseConfig(cameras, dir_.path() / "cameras.yaml");
  ASSERT_FALSE(config.has_value());
  EXPECT_NE(config.error().message.find(
                "cameras.yaml:4:15: http.web_config: " + (dir_.path() / "web-config.yml").string() +
                ":2:10: basic_auth_users.admin: not a bcrypt hash"),
            std::string::npos)
      << config.error().message;
  EXPECT_NE(parseConfig("version: 1\nhttp: {metrics_need_login: true}\ncameras: []\n",
                        dir_.path() / "cameras.yaml")
                .error()
                .message.find("http.metrics_need_login: needs logins"),
            std::string::npos);
}

}  // namespace
}  // namespace vigil
