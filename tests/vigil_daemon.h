#pragma once

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "detector/backend.h"
#include "tests/http_get.h"
#include "tests/process.h"
#include "tests/wait.h"

namespace vigil::testing {

// `vigil run` as a test runs it: the real binary on a cameras.yaml written into the test's own
// directory, its log beside it, and its HTTP server on a port of the kernel's choosing
// (`http: {listen: 127.0.0.1:0}` in the file), found in the log. Tests whose file turns HTTP off
// use process() only.
// What the default backend, auto, runs on a plain model on this machine (no NPU): cpu-ort in
// builds with ONNX Runtime, else the OpenCV reference. A build without ONNX Runtime (its fetch
// failed) is no quiet pass in CI: OrtBackendTest.* and
// DetectorAccuracyTest.PersonApIsTheSameOnEveryBackend skip there, saying so, and
// scripts/test.sh --no-skips refuses those skips.
inline std::string autoCpuBackend() {
  return backendNames().find("cpu-ort") != std::string::npos ? "cpu-ort" : "cpu";
}

class VigilDaemon {
 public:
  // Writes `config` to <dir>/cameras.yaml and starts `vigil run --config` on it, with `extra`
  // arguments after.
  VigilDaemon(const std::filesystem::path& dir, const std::string& config,
              const std::vector<std::string>& extra = {}) {
    std::ofstream(dir / "cameras.yaml") << config;
    std::vector<std::string> argv = {VIGIL_BINARY, "run", "--config",
                                     (dir / "cameras.yaml").string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    process_ = std::make_unique<ChildProcess>(argv, dir / "vigil.log");
  }

  ChildProcess& process() { return *process_; }
  std::string log() const { return process_->log(); }

  // The HTTP port, once the daemon has logged it; 0 when it does not within the deadline.
  int port() {
    if (port_ != 0) return port_;
    if (!process_->waitForLog("/api/status on http", kDeadline)) return 0;
    std::smatch m;
    const std::string text = process_->log();
    // http or https, on 127.0.0.1 or whichever address the test's file listens on.
    if (std::regex_search(text, m, std::regex("/api/status on https?://[^ ]*:(\\d+)/"))) {
      port_ = std::stoi(m[1]);
    }
    return port_;
  }

  // /api/status now; null when it does not answer 200.
  nlohmann::json status() {
    auto reply = httpGet(port(), "/api/status");
    if (!reply || reply->status != 200) return nullptr;
    return nlohmann::json::parse(reply->body, nullptr, false);
  }

  // The camera's object in /api/status now; null when absent.
  nlohmann::json camera(const std::string& name) {
    nlohmann::json s = status();
    if (!s.is_object()) return nullptr;
    for (const auto& c : s["cameras"]) {
      if (c["name"] == name) return c;
    }
    return nullptr;
  }

  // The camera's detected-frame count now (0 when the status does not answer).
  std::uint64_t detected(const std::string& name) {
    nlohmann::json c = camera(name);
    return c.is_object() ? c["frames"]["detected"].get<std::uint64_t>() : 0;
  }

  // Waits until /api/status satisfies `accept`.
  bool waitForStatus(const std::function<bool(const nlohmann::json&)>& accept,
                     std::chrono::milliseconds limit = kDeadline) {
    return waitUntil(
        [&] {
          nlohmann::json s = status();
          return s.is_object() && accept(s);
        },
        limit, 100ms);
  }

  // Waits until the camera's object in /api/status satisfies `accept` (a camera restarted by a
  // reload sets its state from its own thread, after the reload's log line).
  bool waitForCamera(const std::string& name,
                     const std::function<bool(const nlohmann::json&)>& accept,
                     std::chrono::milliseconds limit = kDeadline) {
    return waitUntil(
        [&] {
          nlohmann::json c = camera(name);
          return c.is_object() && accept(c);
        },
        limit, 100ms);
  }

  // Waits until the camera has detected `frames` frames more than `after`.
  bool waitDetected(const std::string& name, std::uint64_t after, std::uint64_t frames = 3,
                    std::chrono::milliseconds limit = kDeadline) {
    return waitUntil([&] { return detected(name) >= after + frames; }, limit, 100ms);
  }

  ChildProcess::Stopped stop(int sig = SIGTERM) { return process_->stop(sig); }

 private:
  std::unique_ptr<ChildProcess> process_;
  int port_ = 0;
};

}  // namespace vigil::testing
