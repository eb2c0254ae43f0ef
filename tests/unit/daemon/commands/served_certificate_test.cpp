#include "daemon/commands/served_certificate.h"

#include <gtest/gtest.h>

#include <regex>

#include "tests/temp_dir.h"
#include "tests/test_pki.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;

// A self-signed certificate made as a user would with openssl, valid for 365 days from now;
// `altNames` empty: no subjectAltName (the usual `-subj /CN=localhost` alone).
std::string selfSigned(const std::filesystem::path& dir, const std::string& altNames) {
  const std::string cert = (dir / "vigil.crt").string();
  std::vector<std::string> argv = {testing::kOpensslPath,
                                   "req",
                                   "-x509",
                                   "-newkey",
                                   "ec",
                                   "-pkeyopt",
                                   "ec_paramgen_curve:prime256v1",
                                   "-nodes",
                                   "-days",
                                   "365",
                                   "-subj",
                                   "/CN=localhost",
                                   "-keyout",
                                   (dir / "vigil.key").string(),
                                   "-out",
                                   cert};
  if (!altNames.empty()) argv.insert(argv.end(), {"-addext", "subjectAltName=" + altNames});
  EXPECT_TRUE(testing::runTool(argv, dir / "openssl.log"));
  return cert;
}

HttpConfig servedWith(const std::string& certFile, const std::string& listen) {
  auto web = std::make_shared<WebConfig>();
  web->tls = TlsServerConfig{};
  web->tls->certFile = certFile;
  HttpConfig http;
  http.listen = listen;
  http.web = web;
  return http;
}

// The findings' lines, one per finding ("ok: ..." or "NO: ..."), for readable failures.
std::string lines(const std::vector<SetupFinding>& findings) {
  std::string out;
  for (const SetupFinding& f : findings) out += (f.ok ? "ok: " : "NO: ") + f.found + "\n";
  return out;
}

TEST(ServedCertificateTest, ACommonNameAloneCoversNothingForAScraper) {
  TempDir dir;
  const auto findings =
      checkServedCertificate(servedWith(selfSigned(dir.path(), ""), "127.0.0.1:9842"), {});
  ASSERT_EQ(findings.size(), 3U) << lines(findings);
  EXPECT_FALSE(findings[0].ok) << lines(findings);
  EXPECT_NE(findings[0].found.find("no subjectAltName: NOT 127.0.0.1, localhost"),
            std::string::npos)
      << lines(findings);
  EXPECT_NE(findings[0].found.find("subjectAltName=DNS:<name>,IP:<address>"), std::string::npos);
}

TEST(ServedCertificateTest, NamesCoveringTheListenAddressValidityAndTheCaAreSaid) {
  TempDir dir;
  const std::string cert = selfSigned(dir.path(), "DNS:localhost,IP:127.0.0.1");
  const auto findings = checkServedCertificate(servedWith(cert, "127.0.0.1:9842"), {});
  ASSERT_EQ(findings.size(), 3U);
  EXPECT_TRUE(findings[0].ok && findings[1].ok && findings[2].ok) << lines(findings);
  EXPECT_EQ(findings[0].found, "names DNS:localhost, IP:127.0.0.1: cover 127.0.0.1, localhost");
  EXPECT_TRUE(std::regex_match(findings[1].found, std::regex("valid for 36[45] more day\\(s\\)")))
      << findings[1].found;
  EXPECT_EQ(findings[2].found,
            "self-signed (CN=localhost): a scraper needs this certificate itself as its ca_file");
  // Only the IP in the names: a client of "localhost" would refuse it; the listen IP is covered.
  const auto ipOnly = checkServedCertificate(
      servedWith(selfSigned(dir.path(), "IP:127.0.0.1"), "127.0.0.1:9842"), {});
  EXPECT_TRUE(ipOnly[0].ok);
  EXPECT_NE(ipOnly[0].found.find("cover 127.0.0.1; not localhost"), std::string::npos)
      << lines(ipOnly);
}

TEST(ServedCertificateTest, EveryAddressIsJudgedByThisMachinesNames) {
  TempDir dir;
  const std::string cert = selfSigned(dir.path(), "DNS:hall.lan");
  auto findings =
      checkServedCertificate(servedWith(cert, "0.0.0.0:9842"), {.hostNames = {"hall", "hall.lan"}});
  EXPECT_TRUE(findings[0].ok) << lines(findings);
  EXPECT_NE(findings[0].found.find("cover hall.lan; not hall"), std::string::npos);
  findings = checkServedCertificate(servedWith(cert, "[::]:9842"), {.hostNames = {"shop"}});
  EXPECT_FALSE(findings[0].ok) << lines(findings);
}

TEST(ServedCertificateTest, ExpiryIsAWarningUnderTwoWeeksAndNotReadyOnceExpired) {
  TempDir dir;
  const HttpConfig http = servedWith(selfSigned(dir.path(), "IP:127.0.0.1"), "127.0.0.1:9842");
  const auto now = std::chrono::system_clock::now();
  auto soon = checkServedCertificate(http, {.hostNames = {}, .now = now + 24h * 360});
  EXPECT_TRUE(soon[1].ok);
  EXPECT_TRUE(std::regex_match(soon[1].found, std::regex("WARNING: expires in [45] day\\(s\\);.*")))
      << soon[1].found;
  auto expired = checkServedCertificate(http, {.hostNames = {}, .now = now + 24h * 375});
  EXPECT_FALSE(expired[1].ok);
  EXPECT_TRUE(std::regex_match(expired[1].found, std::regex("EXPIRED (9|10) day\\(s\\) ago.*")))
      << expired[1].found;
  auto early = checkServedCertificate(http, {.hostNames = {}, .now = now - 24h * 3});
  EXPECT_FALSE(early[1].ok);
  EXPECT_NE(early[1].found.find("NOT YET VALID"), std::string::npos) << early[1].found;
}

TEST(ServedCertificateTest, ACaSignedCertificateNamesItsCa) {
  TempDir dir;
  testing::TestPki pki(dir.path() / "pki");
  ASSERT_TRUE(pki.generate());
  const auto findings = checkServedCertificate(servedWith(pki.serverCert(), "127.0.0.1:9842"), {});
  ASSERT_EQ(findings.size(), 3U);
  EXPECT_EQ(findings[2].found.rfind("signed by CN=vigil-test CA: a scraper needs that CA's "
                                    "certificate as its ca_file",
                                    0),
            0U)
      << findings[2].found;
}

TEST(ServedCertificateTest, NoTlsNoFindingsAndAnUnreadableFileIsSaid) {
  EXPECT_TRUE(checkServedCertificate(HttpConfig{}, {}).empty());
  const auto missing = checkServedCertificate(servedWith("/nonexistent/vigil.crt", "x:1"), {});
  ASSERT_EQ(missing.size(), 1U);
  EXPECT_FALSE(missing[0].ok);
  EXPECT_EQ(missing[0].found, "CANNOT READ /nonexistent/vigil.crt");
}

}  // namespace
}  // namespace vigil
