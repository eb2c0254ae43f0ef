// `vigil run` with http.web_config, from outside: curl as the HTTPS client, a real Prometheus
// scraping over TLS with basic auth, the web configuration changed under the running daemon.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "daemon/config/web_config.h"
#include "daemon/web/http_logins.h"
#include "tests/headless_chromium.h"
#include "tests/model_paths.h"
#include "tests/occurrences.h"
#include "tests/process.h"
#include "tests/prometheus_server.h"
#include "tests/temp_dir.h"
#include "tests/test_pki.h"
#include "tests/vigil_daemon.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

constexpr const char* kCurl = "/usr/bin/curl";

std::filesystem::path securedClip() { return testing::videosDir() / "TUD-Campus.mp4"; }

#define VIGIL_REQUIRE_CURL_AND_CLIP()                                                              \
  do {                                                                                             \
    VIGIL_REQUIRE_MODEL();                                                                         \
    if (access(kCurl, X_OK) != 0) GTEST_SKIP() << "curl is not installed (apt-get install curl)";  \
    if (!std::filesystem::exists(securedClip())) GTEST_SKIP() << "clip absent: " << securedClip(); \
  } while (0)

// The status code curl saw, or 0 when it got no HTTP answer (TLS refused, connection failed).
int curlStatus(const std::filesystem::path& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {kCurl,        "-s", "-o", "/dev/null",
                                   "--max-time", "10", "-w", "status=%{http_code}\n"};
  argv.insert(argv.end(), args.begin(), args.end());
  testing::ChildProcess curl(argv, dir / "curl.log");
  curl.wait();
  std::smatch m;
  const std::string log = curl.log();
  return std::regex_search(log, m, std::regex("status=(\\d+)")) ? std::stoi(m[1]) : 0;
}

std::string hashOf(const std::string& password) {
  auto hash = bcryptHash(password, 10);
  EXPECT_TRUE(hash);
  return hash.value_or("");
}

std::string cameras(const std::string& listen, bool metricsNeedLogin) {
  return "version: 1\ndetector:\n  model: " + testing::modelDir().string() +
         "\nhttp:\n  listen: " + listen + "\n  web_config: web-config.yml\n  metrics_need_login: " +
         (metricsNeedLogin ? "true" : "false") +
         "\ncameras:\n  - {name: door, source: 'file:" + securedClip().string() +
         "', loop: true, detect_fps: 1}\n";
}

void writeWebConfig(const std::filesystem::path& dir, const testing::TestPki& pki,
                    const std::string& password) {
  // Written aside and renamed, as an editor or a certificate renewal does.
  std::ofstream(dir / "web-config.yml.new")
      << "tls_server_config:\n  cert_file: " << pki.serverCert()
      << "\n  key_file: " << pki.serverKey()
      << "\nbasic_auth_users:\n  prometheus: " << hashOf(password) << "\n";
  std::filesystem::rename(dir / "web-config.yml.new", dir / "web-config.yml");
}

TEST(WebSecurityTest, PrometheusScrapesOverTlsWithBasicAuth) {
  VIGIL_REQUIRE_CURL_AND_CLIP();
  VIGIL_REQUIRE_PROMETHEUS();
  TempDir dir;
  testing::TestPki pki(dir.path() / "pki");
  ASSERT_TRUE(pki.generate());
  writeWebConfig(dir.path(), pki, "scrape-me");
  std::ofstream(dir.path() / "password") << "scrape-me\n";
  testing::VigilDaemon vigil(dir.path(), cameras("127.0.0.1:0", /*metricsNeedLogin=*/true));
  ASSERT_NE(vigil.port(), 0) << vigil.log();
  const std::string port = std::to_string(vigil.port());
  EXPECT_EQ(
      curlStatus(dir.path(), {"--cacert", pki.caFile(), "https://localhost:" + port + "/metrics"}),
      401)
      << "metrics_need_login";
  testing::PrometheusServer prometheus;
  ASSERT_TRUE(prometheus.start(dir.path(),
                               "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                               "scrape_configs:\n  - job_name: vigil\n    scheme: https\n"
                               "    basic_auth: {username: prometheus, password_file: " +
                                   (dir.path() / "password").string() +
                                   "}\n    tls_config: {ca_file: " + pki.caFile() +
                                   ", server_name: localhost}\n    static_configs:\n"
                                   "      - targets: ['127.0.0.1:" +
                                   port + "']\n"));
  json result;
  const bool up = testing::waitUntil(
      [&] {
        result = prometheus.query("up{job=\"vigil\"}");
        return !result.empty() && result[0]["value"][1] == "1";
      },
      testing::kDeadline, 500ms);
  EXPECT_TRUE(up) << result.dump() << "\n" << prometheus.log();
  json failures = prometheus.query("vigil_http_login_failures_total");
  ASSERT_FALSE(failures.empty()) << "the scrape itself read the daemon's metrics";
  EXPECT_EQ(failures[0]["value"][1], "0");
  EXPECT_TRUE(prometheus.process().stop(SIGTERM).status.has_value());
  EXPECT_TRUE(vigil.process().stop(SIGTERM).status.has_value());
}

TEST(WebSecurityTest, ANewPasswordAppliesOnSighupAndARenewedCertificateWithoutOne) {
  VIGIL_REQUIRE_CURL_AND_CLIP();
  TempDir dir;
  testing::TestPki first(dir.path() / "first", "first");
  testing::TestPki renewed(dir.path() / "renewed", "renewed");
  ASSERT_TRUE(first.generate());
  ASSERT_TRUE(renewed.generate());
  writeWebConfig(dir.path(), first, "old-password");
  testing::VigilDaemon vigil(dir.path(), cameras("127.0.0.1:0", false));
  ASSERT_NE(vigil.port(), 0) << vigil.log();
  const std::string url = "https://localhost:" + std::to_string(vigil.port()) + "/api/status";
  auto status = [&](const testing::TestPki& ca, const std::string& login) {
    std::vector<std::string> args = {"--cacert", ca.caFile(), url};
    if (!login.empty()) args.insert(args.end(), {"-u", login});
    return curlStatus(dir.path(), args);
  };
  EXPECT_EQ(status(first, ""), 401);
  EXPECT_EQ(status(first, "prometheus:old-password"), 200);
  EXPECT_EQ(curlStatus(dir.path(), {"http://127.0.0.1:" + std::to_string(vigil.port()) + "/"}), 400)
      << "plain HTTP on the TLS port";

  writeWebConfig(dir.path(), first, "new-password");
  vigil.process().signal(SIGHUP);
  ASSERT_TRUE(vigil.process().waitForLog("reload applied")) << vigil.log();
  EXPECT_EQ(status(first, "prometheus:old-password"), 401) << "remembered logins go with the file";
  EXPECT_EQ(status(first, "prometheus:new-password"), 200);

  // A renewal replaces the certificate and key (no SIGHUP): the daemon notices within seconds.
  std::filesystem::copy_file(renewed.serverCert(), first.serverCert(),
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(renewed.serverKey(), first.serverKey(),
                             std::filesystem::copy_options::overwrite_existing);
  EXPECT_TRUE(testing::waitUntil([&] { return status(renewed, "prometheus:new-password") == 200; },
                                 testing::kDeadline, 500ms))
      << vigil.log();
  EXPECT_EQ(status(first, "prometheus:new-password"), 0) << "the old CA no longer verifies it";

  // Guessing: 401 for a burst of wrong passwords, then 429. The old password after the SIGHUP
  // was one failure already, unless a place came back since (one every 12 s): 4 or 5 401s.
  int wrong = 0;
  int code = 0;
  while (wrong <= LoginThrottle::kBurst &&
         (code = status(renewed, "prometheus:guess" + std::to_string(wrong))) == 401) {
    ++wrong;
  }
  EXPECT_EQ(code, 429);
  EXPECT_GE(wrong, LoginThrottle::kBurst - 1);
  // The right login, verified before, is still served.
  EXPECT_EQ(status(renewed, "prometheus:new-password"), 200);
  EXPECT_TRUE(vigil.process().waitForLog("failed login from 127.0.0.1 as 'prometheus'"))
      << vigil.log();
  EXPECT_TRUE(vigil.process().stop(SIGTERM).status.has_value());
}

TEST(WebSecurityTest, OffLoopbackWithoutLoginsPicturesAre403AndMonitoringAnswers) {
  VIGIL_REQUIRE_CURL_AND_CLIP();
  TempDir dir;
  std::ofstream(dir.path() / "web-config.yml") << "";  // no TLS, no logins
  testing::VigilDaemon vigil(dir.path(), cameras("0.0.0.0:0", false));
  ASSERT_NE(vigil.port(), 0) << vigil.log();
  ASSERT_TRUE(
      vigil.process().waitForLog("not on loopback: camera pictures, events and the page "
                                 "answer 403"))
      << vigil.log();
  const std::string base = "http://127.0.0.1:" + std::to_string(vigil.port());
  EXPECT_EQ(curlStatus(dir.path(), {base + "/api/cameras/door/latest.jpg"}), 403);
  EXPECT_EQ(curlStatus(dir.path(), {base + "/api/status"}), 403);
  EXPECT_EQ(curlStatus(dir.path(), {base + "/api/events"}), 403);
  EXPECT_EQ(curlStatus(dir.path(), {base + "/"}), 403);
  EXPECT_EQ(curlStatus(dir.path(), {base + "/metrics"}), 200);
  const int health = curlStatus(dir.path(), {base + "/healthz"});
  EXPECT_TRUE(health == 200 || health == 503) << health << ": answered, healthy or not yet";
  EXPECT_TRUE(vigil.process().stop(SIGTERM).status.has_value());
}

// A client that does not trust the certificate (curl without the CA, as Prometheus with a
// certificate whose names miss the address it scrapes) is told in the log with the reason and
// what to check, once a minute per address; every failure is counted.
TEST(WebSecurityTest, ARefusedCertificateIsLoggedWithTheReasonOnceAMinute) {
  VIGIL_REQUIRE_CURL_AND_CLIP();
  TempDir dir;
  testing::TestPki pki(dir.path() / "pki");
  ASSERT_TRUE(pki.generate());
  writeWebConfig(dir.path(), pki, "scrape-me");
  testing::VigilDaemon vigil(dir.path(), cameras("127.0.0.1:0", /*metricsNeedLogin=*/false));
  ASSERT_NE(vigil.port(), 0) << vigil.log();
  const std::string base = "https://localhost:" + std::to_string(vigil.port());
  EXPECT_EQ(curlStatus(dir.path(), {base + "/metrics"}), 0) << "curl refuses an unknown CA";
  EXPECT_EQ(curlStatus(dir.path(), {base + "/metrics"}), 0);
  ASSERT_TRUE(testing::waitUntil([&] {
    testing::ChildProcess curl({kCurl, "-s", "--cacert", pki.caFile(), base + "/metrics"},
                               dir.path() / "metrics.txt");
    curl.wait();
    return curl.log().find("vigil_http_tls_handshake_failures_total 2") != std::string::npos;
  })) << vigil.log();
  const std::string log = vigil.log();
  EXPECT_EQ(testing::occurrences(log, "TLS handshake with 127.0.0.1 failed: "), 1U) << log;
  EXPECT_NE(log.find("the client refused this server's certificate"), std::string::npos) << log;
  EXPECT_TRUE(vigil.process().stop(SIGTERM).status.has_value());
}

// Opened as a user types it, with the login in the URL (https://user:pass@host:port/): the page's
// own requests (its status poll, the pictures) carry no credentials in their URLs, which
// Chromium refuses to fetch, and still get in (the browser keeps the login for the origin).
TEST(WebSecurityTest, ThePageWorksOpenedWithTheLoginInItsUrl) {
  VIGIL_REQUIRE_CURL_AND_CLIP();
  ASSERT_EQ(access(testing::kChromium, X_OK), 0)
      << testing::kChromium
      << " is not installed (scripts/install-deps.sh --tests installs chromium)";
  TempDir dir;
  testing::TestPki pki(dir.path() / "pki");
  ASSERT_TRUE(pki.generate());
  writeWebConfig(dir.path(), pki, "scrape-me");
  testing::VigilDaemon vigil(dir.path(), cameras("127.0.0.1:0", /*metricsNeedLogin=*/true));
  ASSERT_NE(vigil.port(), 0) << vigil.log();
  const std::string port = std::to_string(vigil.port());
  ASSERT_TRUE(testing::waitUntil([&] {
    return curlStatus(dir.path(), {"--cacert", pki.caFile(), "-u", "prometheus:scrape-me",
                                   "https://localhost:" + port + "/api/cameras/door/latest.jpg"}) ==
           200;
  })) << vigil.log();
  const std::string dom =
      testing::renderedPage(dir.path(), "https://prometheus:scrape-me@localhost:" + port + "/",
                            1280, {"--ignore-certificate-errors"});
  EXPECT_NE(dom.find("<span data-k=\"state\">streaming"), std::string::npos)
      << "the status poll got in\n"
      << dom;
  std::smatch frames;
  ASSERT_TRUE(std::regex_search(dom, frames, std::regex("data-frames=\"(\\d+)\""))) << dom;
  EXPECT_GE(std::stoi(frames[1]), 1) << "the live picture got in";
  EXPECT_EQ(dom.find("prometheus:scrape-me"), std::string::npos) << "no login in the page's URLs";
  EXPECT_TRUE(vigil.process().stop(SIGTERM).status.has_value());
}

TEST(WebSecurityTest, VigilPasswdPrintsALineThatTheWebConfigurationAcceptsAndThatVerifies) {
  TempDir dir;
  // The password on standard input (not a terminal): one line.
  testing::ChildProcess passwd(
      {"/bin/sh", "-c",
       "printf 'horse battery\\n' | " + std::string(VIGIL_BINARY) + " passwd prometheus 2>&1"},
      dir.path() / "passwd.log");
  ASSERT_EQ(passwd.wait(), 0) << passwd.log();
  const std::string line = passwd.log();
  ASSERT_TRUE(line.starts_with("prometheus: $2b$10$")) << line;
  std::ofstream(dir.path() / "web-config.yml") << "basic_auth_users:\n  " << line;
  auto web = loadWebConfig(dir.path() / "web-config.yml");
  ASSERT_TRUE(web) << web.error().message;
  HttpLogins logins(web->basicAuthUsers);
  EXPECT_TRUE(logins.verify({"prometheus", "horse battery"}));
  EXPECT_FALSE(logins.verify({"prometheus", "horse battery "}));
  testing::ChildProcess empty(
      {"/bin/sh", "-c", std::string(VIGIL_BINARY) + " passwd u < /dev/null"},
      dir.path() / "empty.log");
  EXPECT_EQ(empty.wait(), 1) << "no password, no line";
}

}  // namespace
}  // namespace vigil
