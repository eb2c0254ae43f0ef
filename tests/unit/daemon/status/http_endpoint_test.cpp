// The daemon's HTTP side (HttpEndpoint), on its own: the status API served where http.listen
// says and logged with the port really bound and who may see what (a warning when camera views
// are refused), a listener it cannot bind logged and returned, a reload's logins applied at once,
// and nothing served after the stop.
#include "daemon/status/http_endpoint.h"

#include <gtest/gtest.h>

// clang-format off
// Boost 1.74's asio uses std::exchange without including <utility> (fails with g++ 12, C++20).
#include <utility>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
// clang-format on

#include <future>
#include <regex>
#include <string>
#include <thread>

#include "daemon/events/event_publisher.h"
#include "daemon/events/result_path.h"
#include "daemon/web/http_logins.h"
#include "tests/http_get.h"
#include "tests/log_capture.h"

namespace vigil {
namespace {

namespace asio = boost::asio;

// What the status API reads: an empty daemon.
struct EndpointSources {
  EventPublisher publisher{{}, nullptr};
  Registry registry;
  HistogramFamily* stages = &registry.histogram("endpoint_stages", "s", {"stage", "backend"});
  ResultPath results{publisher,
                     [this](const std::string& b) -> ResultPath::StageHistograms {
                       return {stages->labels({"a", b}), stages->labels({"b", b}),
                               stages->labels({"c", b}), stages->labels({"d", b}),
                               stages->labels({"e", b})};
                     },
                     0.5F};

  StatusApi::Sources sources() {
    return {[] { return DaemonSnapshot{}; },
            [] { return DaemonSnapshot{}; },
            registry,
            results,
            [] { return std::vector<std::string>(); },
            publisher.recentEvents(),
            nullptr};
  }
};

HttpConfig listeningOn(const std::string& listen) {
  HttpConfig c;
  c.listen = listen;
  return c;
}

// The port the endpoint said it serves on ("... on http://127.0.0.1:<port>/"); 0 when it did not.
int portSaid(const std::string& log) {
  std::smatch m;
  if (!std::regex_search(log, m, std::regex("on https?://[^ ]+:([0-9]+)/"))) return 0;
  return std::stoi(m[1]);
}

class HttpEndpointTest : public ::testing::Test {
 protected:
  void serve() {
    serving = std::thread([this] { io.run(); });
  }
  // Runs `f` on the io thread (the control thread, which owns the endpoint) and waits for it.
  void onIo(const std::function<void()>& f) {
    std::promise<void> done;
    asio::post(io, [&] {
      f();
      done.set_value();
    });
    done.get_future().get();
  }
  void TearDown() override {
    if (serving.joinable()) {
      work.reset();
      serving.join();
    }
  }

  EndpointSources in;
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work = asio::make_work_guard(io);
  std::thread serving;
};

TEST_F(HttpEndpointTest, ItServesTheStatusApiAndSaysTheBoundPortAndWhoMaySeeWhat) {
  setLogLevel(spdlog::level::info);
  testing::LogCapture log("daemon");
  in.registry.counter("endpoint_served_total", "served", {}).labels({})->inc(7);
  HttpEndpoint endpoint(io, listeningOn("127.0.0.1:0"), in.sources());
  ASSERT_TRUE(endpoint.start().has_value());
  const int port = portSaid(log.text());
  ASSERT_GT(port, 0) << log.text();
  EXPECT_EQ(log.text(),
            "HTTP: status page, /metrics, /healthz, /readyz and /api/status on http://127.0.0.1:" +
                std::to_string(port) +
                "/\n"
                "HTTP: http on 127.0.0.1:0 without logins: loopback, so every page answers this "
                "machine's users\n");
  serve();
  auto metrics = testing::httpGet(port, "/metrics");
  ASSERT_TRUE(metrics.has_value());
  EXPECT_EQ(metrics->status, 200);
  EXPECT_NE(metrics->body.find("endpoint_served_total 7"), std::string::npos)
      << "the registry's text\n"
      << metrics->body;
  auto status = testing::httpGet(port, "/api/status");
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->status, 200);
  onIo([&] { endpoint.stop(); });
  TearDown();  // the io thread ends before the endpoint goes
}

TEST_F(HttpEndpointTest, CameraViewsRefusedForWantOfLoginsAreAWarning) {
  setLogLevel(spdlog::level::warn);
  testing::LogCapture log("daemon");
  HttpEndpoint endpoint(io, listeningOn("0.0.0.0:0"), in.sources());
  ASSERT_TRUE(endpoint.start().has_value());
  setLogLevel(spdlog::level::info);
  EXPECT_EQ(log.text().rfind("HTTP: http on 0.0.0.0:0 without logins and not on loopback: "
                             "camera pictures, events and the page answer 403",
                             0),
            0U)
      << "the only line at warn\n"
      << log.text();
  endpoint.stop();
}

TEST_F(HttpEndpointTest, AListenerItCannotBindIsLoggedAndReturned) {
  HttpEndpoint first(io, listeningOn("127.0.0.1:0"), in.sources());
  testing::LogCapture log("daemon");
  ASSERT_TRUE(first.start().has_value());
  const int port = portSaid(log.text());
  ASSERT_GT(port, 0);
  HttpEndpoint second(io, listeningOn("127.0.0.1:" + std::to_string(port)), in.sources());
  auto started = second.start();
  ASSERT_FALSE(started.has_value());
  EXPECT_NE(log.text().find(started.error().message + "\n"), std::string::npos)
      << "logged as returned\n"
      << log.text();
  first.stop();
}

TEST_F(HttpEndpointTest, AReloadsLoginsApplyAtOnceAndTheStopEndsServing) {
  testing::LogCapture log("daemon");
  HttpEndpoint endpoint(io, listeningOn("127.0.0.1:0"), in.sources());
  ASSERT_TRUE(endpoint.start().has_value());
  const int port = portSaid(log.text());
  ASSERT_GT(port, 0);
  serve();
  ASSERT_EQ(testing::httpGet(port, "/api/status").value().status, 200);

  auto web = std::make_shared<WebConfig>();
  auto hash = bcryptHash("secret", 10);
  ASSERT_TRUE(hash.has_value());
  web->basicAuthUsers["admin"] = *hash;
  HttpConfig withLogins = listeningOn("127.0.0.1:0");
  withLogins.web = web;
  onIo([&] { endpoint.reload(withLogins); });
  EXPECT_EQ(testing::httpGet(port, "/api/status").value().status, 401)
      << "a camera view needs a login";
  EXPECT_EQ(testing::httpGet(port, "/metrics").value().status, 200) << "monitoring does not";

  onIo([&] { endpoint.stop(); });
  EXPECT_FALSE(testing::httpGet(port, "/metrics").has_value()) << "nothing listens";
  TearDown();  // the io thread ends before the capture goes
  EXPECT_NE(log.text().find("reload: http on 127.0.0.1:0 with logins for 1 user(s)"),
            std::string::npos)
      << log.text();
}

}  // namespace
}  // namespace vigil
