#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/free_port.h"
#include "tests/http_get.h"
#include "tests/process.h"
#include "tests/wait.h"

// A real Prometheus server (Debian's prometheus) started by the test on a free loopback port,
// with the configuration the test writes, its TSDB in the test's directory.
namespace vigil::testing {

inline constexpr const char* kPrometheus = "/usr/bin/prometheus";

#define VIGIL_REQUIRE_PROMETHEUS()                                                \
  do {                                                                            \
    if (access(::vigil::testing::kPrometheus, X_OK) != 0)                         \
      GTEST_SKIP() << "prometheus is not installed (apt-get install prometheus)"; \
  } while (0)

class PrometheusServer {
 public:
  // Writes `config` to <dir>/prometheus.yml and starts the server; returns once it is ready.
  // The port is free when picked but may be taken before Prometheus binds it (another test
  // runs beside this one): then Prometheus exits and the next port is tried.
  ::testing::AssertionResult start(const std::filesystem::path& dir, const std::string& config) {
    std::ofstream(dir / "prometheus.yml") << config;
    for (int attempt = 1; attempt <= 3; ++attempt) {
      const int port = freeLoopbackPort();
      if (port == 0) return ::testing::AssertionFailure() << "no free loopback port";
      process_ = std::make_unique<ChildProcess>(
          std::vector<std::string>{kPrometheus,
                                   "--config.file=" + (dir / "prometheus.yml").string(),
                                   "--storage.tsdb.path=" + (dir / "tsdb").string(),
                                   "--web.listen-address=127.0.0.1:" + std::to_string(port)},
          dir / ("prometheus-" + std::to_string(attempt) + ".log"));
      if (!process_->started()) return ::testing::AssertionFailure() << "cannot start prometheus";
      waitUntil([&] {
        auto ready = httpGet(port, "/-/ready");
        return (ready && ready->status == 200) || process_->wait(0ms).has_value();
      });
      if (!process_->wait(0ms)) {
        port_ = port;
        return ::testing::AssertionSuccess();
      }
    }
    return ::testing::AssertionFailure() << "prometheus did not start: " << log();
  }

  // GET <path> of the HTTP API, parsed; null when it does not answer 200 with JSON.
  nlohmann::json api(const std::string& path) const {
    auto reply = httpGet(port_, path);
    if (!reply || reply->status != 200) return nullptr;
    return nlohmann::json::parse(reply->body, nullptr, false);
  }

  // The instant vector of a PromQL query now: data.result, or an empty array.
  nlohmann::json query(const std::string& promql) const {
    nlohmann::json reply = api("/api/v1/query?query=" + urlEncoded(promql));
    if (!reply.is_object() || !reply["data"]["result"].is_array()) {
      return nlohmann::json::array();
    }
    return reply["data"]["result"];
  }

  // The alerts of the loaded rules now (pending and firing): data.alerts, or an empty array.
  nlohmann::json alerts() const {
    nlohmann::json reply = api("/api/v1/alerts");
    if (!reply.is_object() || !reply["data"]["alerts"].is_array()) {
      return nlohmann::json::array();
    }
    return reply["data"]["alerts"];
  }

  ChildProcess& process() { return *process_; }
  std::string log() const { return process_ ? process_->log() : std::string(); }

 private:
  static std::string urlEncoded(const std::string& text) {
    static const char* kHex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : text) {
      if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
        out += static_cast<char>(c);
      } else {
        out += '%';
        out += kHex[c >> 4];
        out += kHex[c & 15];
      }
    }
    return out;
  }

  std::unique_ptr<ChildProcess> process_;
  int port_ = 0;
};

}  // namespace vigil::testing
