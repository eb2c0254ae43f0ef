// What the web configuration gives the server (web_security), on its own: the server's security
// from the http section, the one line on who may see what, and the watch that applies a changed
// web configuration to a running server, or keeps the running one when the file does not load.
#include "daemon/web/web_security.h"

#include <gtest/gtest.h>

// clang-format off
// Boost 1.74's asio uses std::exchange without including <utility> (fails with g++ 12, C++20).
#include <utility>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
// clang-format on

#include <filesystem>
#include <future>
#include <string>
#include <thread>

#include "daemon/config/web_config.h"
#include "daemon/web/http_logins.h"
#include "tests/http_get.h"
#include "tests/log_capture.h"
#include "tests/temp_dir.h"
#include "tests/wait.h"

namespace vigil {
namespace {

namespace asio = boost::asio;

std::string bcryptOf(const std::string& password) {
  auto hash = bcryptHash(password, 10);
  EXPECT_TRUE(hash.has_value());
  return hash ? *hash : "";
}

// A web configuration as loaded, with `users` logins, a header, and a TLS context when `tls`.
std::shared_ptr<const WebConfig> webWith(std::size_t users, bool tls) {
  auto web = std::make_shared<WebConfig>();
  for (std::size_t i = 0; i < users; ++i) {
    web->basicAuthUsers["user" + std::to_string(i)] = bcryptOf("secret");
  }
  web->headers = {{"X-Frame-Options", "deny"}};
  if (tls) web->tlsContext = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_server);
  return web;
}

HttpConfig httpOn(const std::string& listen, std::shared_ptr<const WebConfig> web = nullptr) {
  HttpConfig c;
  c.listen = listen;
  c.web = std::move(web);
  return c;
}

TEST(WebSecurityTest, WithoutAWebConfigurationThereIsNoTlsNoLoginAndNoHeader) {
  HttpConfig c = httpOn("127.0.0.1:9842");
  c.metricsNeedLogin = true;
  const HttpSecurity s = httpSecurityOf(c);
  EXPECT_EQ(s.tls, nullptr);
  EXPECT_EQ(s.logins, nullptr);
  EXPECT_TRUE(s.headers.empty());
  EXPECT_TRUE(s.monitoringNeedsLogin);
}

TEST(WebSecurityTest, TheWebConfigurationGivesItsTlsItsLoginsAndItsHeaders) {
  const auto web = webWith(2, true);
  const HttpSecurity s = httpSecurityOf(httpOn("0.0.0.0:9842", web));
  EXPECT_EQ(s.tls, web->tlsContext);
  ASSERT_NE(s.logins, nullptr);
  EXPECT_EQ(s.headers, web->headers);
  EXPECT_FALSE(s.monitoringNeedsLogin);
  EXPECT_EQ(httpSecurityOf(httpOn("0.0.0.0:9842", webWith(0, false))).logins, nullptr)
      << "no basic_auth_users: no logins";
}

TEST(WebSecurityTest, TheAccessLineSaysWhoMaySeeWhat) {
  HttpConfig off;
  off.enabled = false;
  EXPECT_EQ(describeHttpAccess(off), "http: off");
  EXPECT_EQ(describeHttpAccess(httpOn("127.0.0.1:9842")),
            "http on 127.0.0.1:9842 without logins: loopback, so every page answers this "
            "machine's users");
  EXPECT_EQ(describeHttpAccess(httpOn("0.0.0.0:9842")),
            "http on 0.0.0.0:9842 without logins and not on loopback: camera pictures, events and "
            "the page answer 403 (give http.web_config basic_auth_users to serve them); /metrics, "
            "/healthz and /readyz answer without a login");
  EXPECT_EQ(describeHttpAccess(httpOn("0.0.0.0:9842", webWith(2, false))),
            "http on 0.0.0.0:9842 with logins for 2 user(s): camera pictures, events and the page "
            "need a login; /metrics, /healthz and /readyz answer without one (without TLS the "
            "password crosses the network readable: add tls_server_config)");
  HttpConfig locked = httpOn("[::]:9842", webWith(1, true));
  locked.metricsNeedLogin = true;
  EXPECT_EQ(describeHttpAccess(locked),
            "https on [::]:9842 with logins for 1 user(s): camera pictures, events and the page "
            "need a login; /metrics, /healthz and /readyz need one too");
}

// "Authorization: Basic <base64 of user:password>\r\n".
std::string basicLogin(const std::string& user, const std::string& password) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const std::string in = user + ":" + password;
  std::string out;
  for (std::size_t i = 0; i < in.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, in.size() - i);
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < 3; ++k) {
      v = (v << 8) | (k < n ? static_cast<unsigned char>(in[i + k]) : 0U);
    }
    for (std::size_t k = 0; k < 4; ++k) {
      out += k <= n ? kAlphabet[(v >> (18 - 6 * k)) & 0x3F] : '=';
    }
  }
  return "Authorization: Basic " + out + "\r\n";
}

// A server with one camera view on a loopback port, its security kept by a WebSecurityWatch on
// the io thread, and the web configuration file the watch looks at.
class WebSecurityWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    HttpServerSettings settings;
    settings.listen = "127.0.0.1:0";
    server = std::make_unique<HttpServer>(io, settings);
    server->route("GET", "/camera", [](const HttpRequest&) {
      return HttpResponse{.body = "a picture\n", .headers = {}};
    });
    watch = std::make_unique<WebSecurityWatch>(io, *server);
  }
  void TearDown() override {
    if (serving.joinable()) {
      asio::post(io, [this] {
        watch->stop();
        server->stop();
      });
      work.reset();
      serving.join();
    }
  }

  // Writes the web configuration as a renewal does: a new file renamed over the old one.
  void writeWeb(const std::string& text) {
    writeFile(dir.path() / "web.yml.new", text);
    std::filesystem::rename(dir.path() / "web.yml.new", webFile());
  }
  std::filesystem::path webFile() const { return dir.path() / "web.yml"; }
  HttpConfig loaded() {
    HttpConfig c = httpOn("127.0.0.1:0");
    c.webConfigFile = webFile().string();
    auto web = loadWebConfig(webFile());
    EXPECT_TRUE(web.has_value()) << web.error().message;
    if (web) c.web = std::make_shared<const WebConfig>(std::move(*web));
    return c;
  }
  void serve() {
    ASSERT_TRUE(server->start().has_value());
    serving = std::thread([this] { io.run(); });
  }
  int cameraAs(const std::string& user, const std::string& password) {
    auto reply = testing::rawExchange(server->port(),
                                      "GET /camera HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: "
                                      "close\r\n" +
                                          basicLogin(user, password) + "\r\n");
    return reply ? reply->status : 0;
  }

  TempDir dir;
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work = asio::make_work_guard(io);
  std::unique_ptr<HttpServer> server;
  std::unique_ptr<WebSecurityWatch> watch;
  std::thread serving;
};

TEST_F(WebSecurityWatchTest, AppliedSecurityIsTheServersAtOnce) {
  writeWeb("basic_auth_users:\n  admin: " + bcryptOf("first") + "\n");
  watch->apply(loaded());
  serve();
  auto anonymous = testing::httpGet(server->port(), "/camera");
  ASSERT_TRUE(anonymous.has_value());
  EXPECT_EQ(anonymous->status, 401);
  EXPECT_EQ(cameraAs("admin", "first"), 200);
}

TEST_F(WebSecurityWatchTest, AChangedFileIsReadAgainAndAppliedWhileServing) {
  writeWeb("basic_auth_users:\n  admin: " + bcryptOf("first") + "\n");
  watch->apply(loaded());
  serve();
  ASSERT_EQ(cameraAs("admin", "first"), 200);
  writeWeb("basic_auth_users:\n  admin: " + bcryptOf("second") + "\n");  // a new password
  EXPECT_TRUE(testing::waitUntil([&] { return cameraAs("admin", "second") == 200; }))
      << "read again within " << WebSecurityWatch::kInterval.count() << " s or so";
  EXPECT_EQ(cameraAs("admin", "first"), 401);
}

TEST_F(WebSecurityWatchTest, AChangedFileThatDoesNotLoadIsSaidAndTheRunningSecurityStays) {
  writeWeb("basic_auth_users:\n  admin: " + bcryptOf("first") + "\n");
  watch->apply(loaded());
  testing::LogCapture log("http");  // before the io thread logs
  serve();
  // The log as the io thread (its only writer) has it.
  auto logNow = [&] {
    std::promise<std::string> text;
    asio::post(io, [&] { text.set_value(log.text()); });
    return text.get_future().get();
  };
  writeWeb("basic_auth_users:\n  admin: secret\n");  // not a bcrypt hash
  EXPECT_TRUE(testing::waitUntil([&] {
    return logNow().find("changed but does not load; the running TLS and logins stay") !=
           std::string::npos;
  }));
  EXPECT_EQ(cameraAs("admin", "first"), 200);
  TearDown();  // the io thread ends before the capture goes
}

}  // namespace
}  // namespace vigil
