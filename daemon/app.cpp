#include "daemon/app.h"

// clang-format off
// Boost 1.74's asio uses std::exchange without including <utility> (fails with g++ 12, C++20).
#include <utility>
#include <boost/asio.hpp>
// clang-format on

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "daemon/capture/camera.h"
#include "daemon/config.h"
#include "daemon/log.h"
#include "daemon/pipeline/inference_worker.h"
#include "daemon/pipeline/scheduler.h"

namespace vigil {

namespace {

namespace asio = boost::asio;

DetectorOptions detectorOptions(const DetectorConfig& c) {
  DetectorOptions o;
  o.model = c.model.empty() ? std::filesystem::path(VIGIL_DEFAULT_MODEL_DIR)
                            : std::filesystem::path(c.model);
  // npu and auto arrive with the NPU backend; until then both run the CPU reference.
  o.backend = "cpu";
  o.threads = c.threads;
  o.minScore = c.minScore;
  o.nmsIou = c.nms;
  o.classes = c.classes;
  return o;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(values.size())));
  return values[std::clamp<std::size_t>(rank, 1, values.size()) - 1];
}

// What the io_context thread keeps per camera: the person count it last logged and a bounded
// window of end-to-end latencies.
struct CameraView {
  int persons = -1;
  std::vector<double> latencyMs;  // ring buffer
  std::size_t next = 0;
  static constexpr std::size_t kWindow = 4096;

  void addLatency(double ms) {
    if (latencyMs.size() < kWindow) {
      latencyMs.push_back(ms);
    } else {
      latencyMs[next] = ms;
      next = (next + 1) % kWindow;
    }
  }
};

class Daemon {
 public:
  explicit Daemon(RunOptions options) : options_(std::move(options)), signals_(io_) {}

  int run() {
    auto config = loadConfig(options_.configPath);
    if (!config) {
      log_->error("{}", config.error().message);
      return 1;
    }
    if (!startWorker(config->detector)) return 1;
    config_ = *config;
    for (const CameraConfig& c : config_.cameras) startCamera(c);
    log_->info("running {} camera(s) from {}; SIGHUP reloads, SIGTERM stops", cameras_.size(),
               options_.configPath.string());
    if (cameras_.empty()) log_->warn("no enabled camera in {}", options_.configPath.string());

    signals_.add(SIGINT);
    signals_.add(SIGTERM);
    signals_.add(SIGHUP);
    waitForSignal();
    asio::steady_timer duration(io_);
    if (options_.durationSeconds) {
      duration.expires_after(std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::duration<double>(*options_.durationSeconds)));
      duration.async_wait([this](boost::system::error_code ec) {
        if (!ec) {
          log_->info("--duration reached, stopping");
          shutdown();
        }
      });
    }
    startedAt_ = SteadyClock::now();
    io_.run();
    // The summary tells each camera's state as it was while running, before the stop.
    std::map<std::string, CameraState> states;
    for (const auto& [name, camera] : cameras_) states[name] = camera->state();
    stopAll();
    writeSummary(states);
    log_->info("stopped");
    return 0;
  }

 private:
  void waitForSignal() {
    signals_.async_wait([this](boost::system::error_code ec, int signal) {
      if (ec) return;
      if (signal == SIGHUP) {
        reload();
        waitForSignal();
        return;
      }
      log_->info("signal {} received, stopping", signal);
      shutdown();
    });
  }

  void shutdown() {
    signals_.cancel();
    io_.stop();
  }

  bool startWorker(const DetectorConfig& config) {
    auto detector = Detector::create(detectorOptions(config));
    if (!detector) {
      log_->error("detector: {}", detector.error().message);
      return false;
    }
    log_->info("detector: model {} on backend '{}' ({}), min score {}, NMS IoU {}",
               (*detector)->manifest().name, (*detector)->backend().name(),
               (*detector)->backend().device(), (*detector)->minScore(), (*detector)->nmsIou());
    if (worker_) worker_->stop();
    worker_ = std::make_unique<InferenceWorker>(
        std::move(*detector), scheduler_, [this](FrameResult&& result) {
          asio::post(io_, [this, r = std::move(result)]() { onResult(r); });
        });
    worker_->start();
    return true;
  }

  void startCamera(const CameraConfig& c) {
    if (!c.enabled) {
      log_->info("[cam={}] disabled in the configuration", c.name);
      return;
    }
    auto camera = std::make_unique<Camera>(c, scheduler_);
    camera->start();
    log_->info("[cam={}] started: {} source {}, detect {} fps", c.name, sourceKindName(c.kind),
               c.location, c.detectFps);
    cameras_[c.name] = std::move(camera);
  }

  void onResult(const FrameResult& r) {
    CameraView& view = views_[r.camera];
    double latencyMs =
        std::chrono::duration<double, std::milli>(r.doneTime - r.captureTime).count();
    view.addLatency(latencyMs);
    int persons = 0;
    float best = 0;
    for (const Detection& d : r.detections) {
      if (d.classId == 0) {
        ++persons;
        best = std::max(best, d.score);
      }
    }
    if (persons != view.persons) {
      if (persons == 0) {
        logger("pipeline")
            ->info("[cam={}] no person (frame {}, latency {:.0f} ms)", r.camera, r.sequence,
                   latencyMs);
      } else {
        logger("pipeline")
            ->info(
                "[cam={}] {} person(s), best score {:.2f} (frame {}, latency "
                "{:.0f} ms)",
                r.camera, persons, best, r.sequence, latencyMs);
      }
      view.persons = persons;
    }
  }

  void reload() {
    log_->info("SIGHUP: reloading {}", options_.configPath.string());
    auto next = loadConfig(options_.configPath);
    if (!next) {
      log_->error("reload rejected, the running configuration stays: {}", next.error().message);
      return;
    }
    if (!(next->detector == config_.detector)) {
      if (!startWorker(next->detector)) {
        log_->error(
            "reload rejected, the running configuration stays: the new detector "
            "settings do not load");
        return;
      }
    }
    int restarted = 0;
    int added = 0;
    int removed = 0;
    std::map<std::string, const CameraConfig*> wanted;
    for (const CameraConfig& c : next->cameras) wanted[c.name] = &c;
    for (auto it = cameras_.begin(); it != cameras_.end();) {
      auto w = wanted.find(it->first);
      if (w == wanted.end() || !(*w->second == it->second->config())) {
        it->second->stop();
        views_.erase(it->first);
        it = cameras_.erase(it);
        w == wanted.end() ? ++removed : ++restarted;
      } else {
        ++it;
      }
    }
    for (const CameraConfig& c : next->cameras) {
      if (cameras_.count(c.name) == 0) {
        bool wasRunning = std::any_of(config_.cameras.begin(), config_.cameras.end(),
                                      [&](const CameraConfig& o) { return o.name == c.name; });
        startCamera(c);
        if (!wasRunning) ++added;
      }
    }
    config_ = *next;
    log_->info("reload applied: {} camera(s) restarted, {} added, {} removed, {} running",
               restarted, added, removed, cameras_.size());
  }

  void stopAll() {
    // Cameras first, so no thread offers frames to a stopped scheduler.
    for (auto& [name, camera] : cameras_) camera->stop();
    if (worker_) worker_->stop();
  }

  void writeSummary(const std::map<std::string, CameraState>& states) {
    double seconds = std::chrono::duration<double>(SteadyClock::now() - startedAt_).count();
    nlohmann::json cameras = nlohmann::json::object();
    for (const auto& [name, camera] : cameras_) {
      const CameraCounters& c = camera->channel()->counters();
      const CameraView& v = views_[name];
      double p50 = percentile(v.latencyMs, 0.5);
      double p99 = percentile(v.latencyMs, 0.99);
      log_->info(
          "[cam={}] {} captured, {} detected ({:.2f}/s), {} skipped, {} dropped, {} decode "
          "errors, {} reconnects, latency p50 {:.0f} ms p99 {:.0f} ms",
          name, c.captured.load(), c.detected.load(),
          seconds > 0 ? static_cast<double>(c.detected.load()) / seconds : 0.0, c.skipped.load(),
          c.dropped.load(), c.decodeErrors.load(), c.reconnects.load(), p50, p99);
      cameras[name] = {
          {"captured", c.captured.load()},
          {"detected", c.detected.load()},
          {"skipped", c.skipped.load()},
          {"dropped", c.dropped.load()},
          {"decode_errors", c.decodeErrors.load()},
          {"reconnects", c.reconnects.load()},
          {"state", cameraStateName(states.at(name))},
          {"latency_ms", {{"p50", p50}, {"p99", p99}, {"samples", v.latencyMs.size()}}}};
    }
    if (options_.summaryJson.empty()) return;
    nlohmann::json summary = {{"seconds", seconds},
                              {"detection_failures", worker_ ? worker_->failures() : 0},
                              {"cameras", cameras}};
    std::ofstream out(options_.summaryJson);
    out << summary.dump(2) << '\n';
    if (!out) log_->error("{}: cannot write the summary", options_.summaryJson.string());
  }

  RunOptions options_;
  std::shared_ptr<spdlog::logger> log_ = logger("daemon");
  asio::io_context io_;
  asio::signal_set signals_;
  Config config_;
  Scheduler scheduler_;
  std::unique_ptr<InferenceWorker> worker_;
  std::map<std::string, std::unique_ptr<Camera>> cameras_;
  std::map<std::string, CameraView> views_;
  SteadyClock::time_point startedAt_;
};

}  // namespace

int runDaemon(const RunOptions& options) {
  Daemon daemon(options);
  return daemon.run();
}

}  // namespace vigil
