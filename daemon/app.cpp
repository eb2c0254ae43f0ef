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
#include "daemon/publish/event_publisher.h"
#include "daemon/publish/mqtt_client.h"

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

constexpr auto kPresenceTick = std::chrono::milliseconds(250);

std::vector<PublishedCamera> publishedCameras(const Config& config) {
  std::vector<PublishedCamera> out;
  for (const CameraConfig& c : config.cameras) {
    if (c.enabled) out.push_back(PublishedCamera{c.name, c.presence, c.zones, c.masks});
  }
  return out;
}

MqttSettings mqttSettings(const MqttConfig& c) {
  MqttSettings s;
  s.url = c.url;
  s.clientId = c.clientId;
  s.username = c.username;
  s.password = c.password;
  s.caFile = c.caFile;
  s.certFile = c.certFile;
  s.keyFile = c.keyFile;
  s.qos = c.qos;
  s.keepAlive = std::chrono::seconds(c.keepAlive);
  s.bufferMessages = c.bufferMessages;
  s.willTopic = statusTopic(c.topicPrefix);
  s.willPayload = "offline";
  return s;
}

EventPublisherSettings publisherSettings(const MqttConfig& c) {
  EventPublisherSettings s;
  s.topicPrefix = c.topicPrefix;
  s.haDiscovery = c.enabled && c.haDiscovery;
  s.haPrefix = c.haPrefix;
  s.snapshots = c.enabled && c.snapshots;
  s.instance = c.clientId;
  s.version = VIGIL_VERSION;
  s.qos = c.qos;
  return s;
}

// What the io_context thread keeps per camera: a bounded window of end-to-end latencies.
struct CameraView {
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
  explicit Daemon(RunOptions options)
      : options_(std::move(options)), signals_(io_), presenceTimer_(io_) {}

  int run() {
    auto config = loadConfig(options_.configPath);
    if (!config) {
      log_->error("{}", config.error().message);
      return 1;
    }
    if (!startPublishing(config->mqtt)) return 1;
    if (!startWorker(config->detector)) return 1;
    config_ = *config;
    // The retained state is OFF and queued before the first frame is even captured.
    publisher_->setCameras(publishedCameras(config_));
    if (mqtt_) mqtt_->start();
    for (const CameraConfig& c : config_.cameras) startCamera(c);
    tickPresence();
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

  bool startPublishing(const MqttConfig& config) {
    if (config.enabled) {
      MqttSettings settings = mqttSettings(config);
      if (auto ok = MqttClient::validate(settings); !ok) {
        log_->error("{}", ok.error().message);
        return false;
      }
      mqtt_ = std::make_unique<MqttClient>(std::move(settings));
      log_->info("MQTT: {} as '{}'{}, topics under {}/, Home Assistant discovery {}", config.url,
                 config.clientId, config.username.empty() ? "" : " user " + config.username,
                 config.topicPrefix, config.haDiscovery ? "under " + config.haPrefix + "/" : "off");
    } else {
      log_->info("MQTT: off (no mqtt section in {})", options_.configPath.string());
    }
    publisher_ = std::make_unique<EventPublisher>(publisherSettings(config), mqtt_.get());
    if (!mqtt_) return true;
    // The client's callbacks come from its own threads: everything goes through the io_context.
    mqtt_->setOnConnected([this] {
      asio::post(io_, [this] {
        // The first connect sends what setCameras() queued; later ones announce again, since a
        // restarted broker may have lost the retained state.
        if (mqttConnects_++ > 0) publisher_->announce();
      });
    });
    if (config.haDiscovery) {
      const std::string haStatus = publisher_->homeAssistantStatusTopic();
      mqtt_->subscribe(haStatus);
      mqtt_->setOnMessage([this, haStatus](std::string topic, std::string payload) {
        if (topic != haStatus) return;
        asio::post(io_, [this, p = std::move(payload)] { publisher_->onHomeAssistantStatus(p); });
      });
    }
    return true;
  }

  void tickPresence() {
    presenceTimer_.expires_after(kPresenceTick);
    presenceTimer_.async_wait([this](boost::system::error_code ec) {
      if (ec) return;
      publisher_->tick(std::chrono::system_clock::now());
      tickPresence();
    });
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
    const auto steadyNow = SteadyClock::now();
    const auto now = std::chrono::system_clock::now();
    view.addLatency(std::chrono::duration<double, std::milli>(r.doneTime - r.captureTime).count());
    ObservedFrame frame;
    frame.camera = r.camera;
    frame.sequence = r.sequence;
    frame.width = r.width;
    frame.height = r.height;
    frame.captureTime = now - std::chrono::duration_cast<std::chrono::system_clock::duration>(
                                  steadyNow - r.captureTime);
    frame.detections = &r.detections;
    frame.backend = r.backend;
    frame.image = r.frame ? &r.frame->image : nullptr;
    publisher_->onFrame(frame, now);
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
    if (!(next->mqtt == config_.mqtt)) {
      log_->warn("reload: the mqtt section changed; it takes effect at the next restart");
      next->mqtt = config_.mqtt;
    }
    config_ = *next;
    publisher_->setCameras(publishedCameras(config_));
    log_->info("reload applied: {} camera(s) restarted, {} added, {} removed, {} running",
               restarted, added, removed, cameras_.size());
  }

  void stopAll() {
    // Cameras first, so no thread offers frames to a stopped scheduler.
    for (auto& [name, camera] : cameras_) camera->stop();
    if (worker_) worker_->stop();
    if (publisher_) publisher_->endAll(std::chrono::system_clock::now());
    // Clean stop: status offline, then a clean disconnect, so the broker sends no last will.
    if (mqtt_) mqtt_->stop(publisher_->statusTopic(), "offline");
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
                              {"events_published", publisher_ ? publisher_->eventsPublished() : 0},
                              {"cameras", cameras}};
    if (mqtt_) {
      summary["mqtt"] = {{"published", mqtt_->published()},
                         {"dropped", mqtt_->dropped()},
                         {"buffered", mqtt_->bufferedNow()},
                         {"reconnects", mqtt_->reconnects()}};
    }
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
  asio::steady_timer presenceTimer_;
  std::unique_ptr<MqttClient> mqtt_;
  std::unique_ptr<EventPublisher> publisher_;  // after mqtt_: it publishes through it
  int mqttConnects_ = 0;
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
