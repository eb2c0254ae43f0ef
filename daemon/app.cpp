#include "daemon/app.h"

// clang-format off
// Boost 1.74's asio uses std::exchange without including <utility> (fails with g++ 12, C++20).
#include <utility>
#include <boost/asio.hpp>
// clang-format on

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>
#include <vector>

#include "daemon/capture/camera.h"
#include "daemon/config.h"
#include "daemon/log.h"
#include "daemon/model_location.h"
#include "daemon/observe/backend_status.h"
#include "daemon/observe/heap.h"
#include "daemon/observe/http_server.h"
#include "daemon/observe/metrics.h"
#include "daemon/observe/power.h"
#include "daemon/observe/status_page.h"
#include "daemon/observe/systemd_notify.h"
#include "daemon/pipeline/inference_worker.h"
#include "daemon/pipeline/scheduler.h"
#include "daemon/publish/event_publisher.h"
#include "daemon/publish/mqtt_client.h"
#include "daemon/url_credentials.h"
#include "detector/annotate.h"

namespace vigil {

namespace {

namespace asio = boost::asio;

// The backend table has "npu" when this build has an NPU runtime (XRT or the Vitis AI EP).
bool hasNpuBackend() {
  for (const BackendEntry& e : backendTable()) {
    if (e.name == "npu") return true;
  }
  return false;
}

// Why the backend in use is the one in use, for the log, vigil_backend_info and /api/status.
std::string backendReason(const DetectorConfig& c, const Detector& d) {
  if (c.backend == "cpu" || c.backend == "cpu-ort") return "configured: " + c.backend;
  if (c.backend == "auto") {
    return d.autoFallback().empty() ? "auto: the preferred backend of this build"
                                    : "auto: " + d.autoFallback();
  }
  if (hasNpuBackend()) return "configured: " + c.backend;
  // Built without any NPU runtime: npu runs the CPU reference, and says so.
  return "configured: " + c.backend + "; no NPU backend in this build, running the CPU reference";
}

DetectorOptions detectorOptions(const DetectorConfig& c) {
  DetectorOptions o;
  o.model = c.model.empty() ? builtInModelDir() : std::filesystem::path(c.model);
  // cpu, cpu-ort and auto run as configured; npu only where this build has it (see
  // backendReason).
  o.backend = c.backend == "npu" && !hasNpuBackend() ? "cpu" : c.backend;
  o.threads = c.threads;
  o.minScore = c.minScore;
  o.nmsIou = c.nms;
  o.classes = c.classes;
  o.vitisai = c.vitisai;
  return o;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(values.size())));
  return values[std::clamp<std::size_t>(rank, 1, values.size()) - 1];
}

constexpr auto kPresenceTick = std::chrono::milliseconds(250);
constexpr auto kHeapReleasePeriod = std::chrono::seconds(60);
constexpr auto kRateWindow = std::chrono::seconds(2);
constexpr auto kMetricsMaxAge = std::chrono::milliseconds(500);

// The per-camera series: declared here once, so adding and removing a camera name the same.
struct MetricText {
  const char* name;
  const char* help;
};

struct CameraCounterMetric {
  std::atomic<std::uint64_t> CameraCounters::*field;
  const char* name;
  const char* help;
};

const CameraCounterMetric kCameraCounterMetrics[] = {
    {&CameraCounters::captured, "vigil_camera_frames_captured_total",
     "Frames read from the camera"},
    {&CameraCounters::skipped, "vigil_camera_frames_skipped_total",
     "Frames replaced by a newer one before the detector took them (by design at detect_fps "
     "below fps)"},
    {&CameraCounters::dropped, "vigil_camera_frames_dropped_total",
     "Frames lost because every frame buffer was in use"},
    {&CameraCounters::decodeErrors, "vigil_camera_decode_errors_total",
     "Corrupt frames the source reported"},
    {&CameraCounters::lost, "vigil_camera_frames_lost_total",
     "Frames the device produced but never delivered (gaps in V4L2 sequence numbers)"},
    {&CameraCounters::detected, "vigil_camera_frames_detected_total",
     "Frames the detector processed"},
    {&CameraCounters::reconnects, "vigil_camera_reconnects_total",
     "Times the source was reopened after a loss"},
    {&CameraCounters::gated, "vigil_camera_frames_gated_total",
     "Frames motion gating held back from the detector (detections that would have run "
     "without it)"},
};

// A camera's frame counters as /api/status ("frames") and --summary-json name them.
nlohmann::json frameCounts(const CameraCounters& c) {
  return {{"captured", c.captured.load()},
          {"detected", c.detected.load()},
          {"skipped", c.skipped.load()},
          {"dropped", c.dropped.load()},
          {"decode_errors", c.decodeErrors.load()},
          {"lost", c.lost.load()},
          {"reconnects", c.reconnects.load()},
          {"gated", c.gated.load()}};
}

constexpr MetricText kCameraUp{"vigil_camera_up", "1 while the camera delivers frames"};
constexpr MetricText kPersonPresent{"vigil_person_present",
                                    "1 while a person is present (after min_frames)"};
constexpr MetricText kPersons{"vigil_persons", "Persons counted in the current presence event"};
constexpr MetricText kMotionState{
    "vigil_camera_motion_state",
    "Motion gating state (value 1 for the current one): off (gating disabled), motion (full "
    "detect_fps), person (still, a person present: still_detect_interval), idle (still, nobody: "
    "idle_detect_interval)"};
constexpr MetricText kGatedSeconds{
    "vigil_camera_gated_detector_seconds_estimate_total",
    "Estimated detector time saved by motion gating: each gated frame times the mean detector "
    "wall-clock time per frame (preprocess + inference + postprocess) when it was gated; an "
    "estimate, not a measurement"};
constexpr MotionState kMotionStates[] = {MotionState::kOff, MotionState::kMotion,
                                         MotionState::kPerson, MotionState::kIdle};

double seconds(double ms) { return ms / 1000.0; }

HttpResponse textResponse(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

HttpResponse jsonResponse(const nlohmann::json& j) {
  HttpResponse r;
  r.contentType = "application/json";
  r.body = j.dump(2) + "\n";
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

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

// What the io_context thread keeps per camera: a bounded window of end-to-end latencies, the
// latest frame with its detections (the status page), frame rates, metric children.
struct CameraView {
  cv::Mat latest;  // buffer reused from frame to frame
  std::vector<Detection> latestDetections;
  bool hasFrame = false;
  std::optional<std::chrono::system_clock::time_point> lastPerson;
  // Rates over the last window of about 2 s.
  SteadyClock::time_point rateSince{};
  std::uint64_t capturedSince = 0;
  std::uint64_t detectedSince = 0;
  double fpsCaptured = 0;
  double fpsDetected = 0;
  std::shared_ptr<Histogram> captureToPublish;
  // Motion gating: the last result showed a person; the gated frames already priced; the
  // estimated detector seconds they saved (updated by the control thread only).
  bool lastHadPerson = false;
  std::uint64_t gatedPriced = 0;
  double gatedSeconds = 0;
  // Whole-camera presence events seen so far (start time and sequence), for --summary-json.
  std::vector<std::pair<std::chrono::system_clock::time_point, std::uint64_t>> events;
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
      : options_(std::move(options)), signals_(io_), presenceTimer_(io_) {
    stageSeconds_ = &metrics_.histogram(
        "vigil_stage_duration_seconds",
        "Time per frame in each pipeline stage: capture_to_start (waiting for the detector), "
        "preprocess, inference, postprocess, publish",
        {"stage"});
    for (const char* stage :
         {"capture_to_start", "preprocess", "inference", "postprocess", "publish"}) {
      stages_[stage] = stageSeconds_->labels({stage});
    }
    captureToPublish_ = &metrics_.histogram(
        "vigil_capture_to_publish_seconds",
        "End to end: from the capture of a frame to its detections published", {"camera"});
    backendStatus_ = std::make_unique<BackendStatus>(metrics_);
  }

  int run() {
    // First: until these are registered, SIGHUP's and SIGTERM's default action kills the
    // process, and systemd may reload or stop as soon as READY=1 (or even before) is sent.
    signals_.add(SIGINT);
    signals_.add(SIGTERM);
    signals_.add(SIGHUP);
    auto config = loadConfig(options_.configPath);
    if (!config) {
      log_->error("{}", config.error().message);
      return 1;
    }
    for (const std::string& warning : config->warnings) log_->warn("{}", warning);
    if (!summaryIsWritable()) return 1;
    if (!startPublishing(config->mqtt)) return 1;
    if (!startWorker(config->detector)) return 1;
    if (!startHttp(config->http)) return 1;
    config_ = *config;
    // The retained state is OFF and queued before the first frame is even captured.
    publisher_->setCameras(publishedCameras(config_));
    if (mqtt_) mqtt_->start();
    for (const CameraConfig& c : config_.cameras) startCamera(c);
    yieldToInference();
    tickPresence();
    releaseHeapPeriodically();
    notifier_.ready(statusLine());
    if (auto timeout = notifier_.watchdogTimeout()) {
      log_->info("systemd watchdog: {} s; pinged while every thread is healthy",
                 std::chrono::duration<double>(*timeout).count());
      pingWatchdog(*timeout / 2);
    }
    log_->info("running {} camera(s) from {}; SIGHUP reloads, SIGTERM stops", cameras_.size(),
               options_.configPath.string());
    if (cameras_.empty()) log_->warn("no enabled camera in {}", options_.configPath.string());

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
    const double cpuAtStart = processCpuSeconds();
    io_.run();
    const double cpuWhileRunning = processCpuSeconds() - cpuAtStart;
    // The summary tells each camera's state as it was while running, before the stop.
    std::map<std::string, CameraState> states;
    for (const auto& [name, camera] : cameras_) states[name] = camera->state();
    stopAll();
    writeSummary(states, cpuWhileRunning);
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
    notifier_.stopping();
    signals_.cancel();
    io_.stop();
  }

  // The control thread (signals, results, MQTT, HTTP) runs at a lower priority than the
  // capture and inference threads, which were started from it before this call and so keep the
  // normal one: a flood of HTTP requests then takes only what detection leaves (measured in
  // bench/http-metrics-load.md). Idle or lightly loaded, priorities change nothing. Threads a
  // SIGHUP reload starts later inherit the lower priority (an unprivileged thread cannot raise
  // it back), which only puts them level with HTTP again.
  void yieldToInference() {
    constexpr int kControlNice = 5;
    if (setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kControlNice) != 0) {
      log_->debug("cannot lower the control thread's priority: {}", std::strerror(errno));
    }
  }

  std::string statusLine() const {
    return fmt::format("{} camera(s), backend {}{}", cameras_.size(), backendStatus_->inUse().name,
                       mqtt_ ? ", MQTT " + config_.mqtt.url : std::string());
  }

  // Pings systemd only while every thread keeps its heartbeat: a stuck capture thread or
  // inference makes systemd restart the service after WatchdogSec.
  void pingWatchdog(std::chrono::microseconds interval) {
    watchdogTimer_.expires_after(interval);
    watchdogTimer_.async_wait([this, interval](boost::system::error_code ec) {
      if (ec) return;
      HttpResponse health = this->health();
      if (health.status == 200) {
        notifier_.watchdog();
        watchdogWarned_ = false;
      } else if (!watchdogWarned_) {
        log_->error("withholding the systemd watchdog ping: {}", health.body);
        notifier_.status("unhealthy: " + health.body);
        watchdogWarned_ = true;
      }
      pingWatchdog(interval);
    });
  }

  // Without this the resident size creeps up for an hour while the live heap stays flat
  // (heap.h).
  void releaseHeapPeriodically() {
    heapTimer_.expires_after(kHeapReleasePeriod);
    heapTimer_.async_wait([this](boost::system::error_code ec) {
      if (ec) return;
      releaseFreeHeap();
      releaseHeapPeriodically();
    });
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

  // --- Observability: metrics, health, status --------------------------------------------

  bool startHttp(const HttpConfig& config) {
    registerMetrics();
    if (!config.enabled) {
      log_->info("HTTP: off (http.enabled is false)");
      return true;
    }
    HttpServerSettings settings;
    settings.listen = config.listen;
    http_ = std::make_unique<HttpServer>(io_, settings);
    http_->route("GET", "/metrics", [this](const HttpRequest&) {
      // Rendered at most every kMetricsMaxAge: a scraper gone wild (or wrk) then costs socket
      // work only, not a render per request on the thread that also publishes events.
      const auto now = SteadyClock::now();
      if (metricsText_.empty() || now - metricsRenderedAt_ >= kMetricsMaxAge) {
        metricsText_ = metrics_.render();
        metricsRenderedAt_ = now;
      }
      HttpResponse r;
      r.contentType = "text/plain; version=0.0.4; charset=utf-8";
      r.body = metricsText_;
      return r;
    });
    http_->route("GET", "/healthz", [this](const HttpRequest&) { return health(); });
    http_->route("GET", "/readyz", [this](const HttpRequest&) { return readiness(); });
    http_->route("GET", "/api/status",
                 [this](const HttpRequest&) { return jsonResponse(status()); });
    http_->routePrefix("GET", "/api/cameras/",
                       [this](const HttpRequest& request) { return latestJpeg(request.subpath); });
    http_->route("GET", "/", [](const HttpRequest&) {
      HttpResponse r;
      r.contentType = "text/html; charset=utf-8";
      r.body = std::string(kStatusPage);
      return r;
    });
    if (auto ok = http_->start(); !ok) {
      log_->error("{}", ok.error().message);
      return false;
    }
    const HttpServerCounters& counters = http_->counters();
    auto& responses = metrics_.callbackCounter("vigil_http_responses_total",
                                               "HTTP responses by status class", {"code"});
    for (std::size_t i = 0; i < counters.responses.size(); ++i) {
      responses.add({fmt::format("{}xx", i + 1)}, [&counters, i]() -> std::optional<double> {
        return static_cast<double>(counters.responses[i].load());
      });
    }
    const std::pair<const std::atomic<std::uint64_t>*, std::pair<const char*, const char*>> http[] =
        {{&counters.badRequests,
          {"vigil_http_bad_requests_total", "Malformed or oversized requests (400, 413, 431)"}},
         {&counters.readTimeouts,
          {"vigil_http_read_timeouts_total", "Connections closed with a request half received"}},
         {&counters.rejected,
          {"vigil_http_connections_rejected_total",
           "Connections refused with 503 at the connection limit (all being answered)"}},
         {&counters.evicted,
          {"vigil_http_connections_evicted_total",
           "Connections waiting longest for a request, closed at the limit to make room"}}};
    for (const auto& [value, text] : http) {
      // A named copy: clang before 16 cannot capture a structured binding.
      metrics_.callbackCounter(text.first, text.second)
          .add({}, [counter = value]() -> std::optional<double> {
            return static_cast<double>(counter->load());
          });
    }
    metrics_.callbackGauge("vigil_http_connections_open", "HTTP connections open now")
        .add({}, [&counters]() -> std::optional<double> {
          return static_cast<double>(counters.open.load());
        });
    // The bound port, not the configured one: port 0 (tests) picks a free one.
    const std::string host = config.listen.substr(0, config.listen.rfind(':'));
    log_->info("HTTP: status page, /metrics, /healthz, /readyz and /api/status on http://{}:{}/",
               host, http_->port());
    return true;
  }

  void registerMetrics() {
    metrics_.info("vigil_build_info", "Vigil's version (value 1)", {{"version", VIGIL_VERSION}});
    registerProcessMetrics(metrics_);
    registerHeapMetrics(metrics_);
    power_ = std::make_shared<PowerMonitor>();
    log_->info("power: {}", power_->description());
    registerPowerMetrics(metrics_, power_);
    metrics_
        .callbackGauge("vigil_package_energy_per_inference_joules",
                       "Package energy (RAPL, every process) per detected frame over the last "
                       "2 s; absent without an energy source")
        .add({}, [this]() { return energyPerInference_; });
    metrics_
        .callbackCounter("vigil_detection_failures_total",
                         "Frames the detector failed on (runtime errors and invalid outputs)")
        .add({}, [this]() -> std::optional<double> {
          return worker_ ? std::optional<double>(static_cast<double>(worker_->failures()))
                         : std::nullopt;
        });
    metrics_
        .callbackCounter("vigil_invalid_outputs_total",
                         "Inferences the runtime reported as successful whose output was "
                         "NaN, Inf or malformed")
        .add({}, [this]() -> std::optional<double> {
          return worker_ ? std::optional<double>(static_cast<double>(worker_->invalidOutputs()))
                         : std::nullopt;
        });
    metrics_
        .callbackCounter("vigil_events_published_total",
                         "Presence events (new, update, end) published")
        .add({}, [this]() -> std::optional<double> {
          return publisher_
                     ? std::optional<double>(static_cast<double>(publisher_->eventsPublished()))
                     : std::nullopt;
        });
    if (mqtt_) {
      auto gauge = [this](const char* name, const char* help, auto read) {
        metrics_.callbackGauge(name, help).add({}, [this, read]() -> std::optional<double> {
          return static_cast<double>(read(*mqtt_));
        });
      };
      auto counter = [this](const char* name, const char* help, auto read) {
        metrics_.callbackCounter(name, help).add({}, [this, read]() -> std::optional<double> {
          return static_cast<double>(read(*mqtt_));
        });
      };
      gauge("vigil_mqtt_connected", "1 while connected to the MQTT broker",
            [](const MqttClient& m) { return m.connected() ? 1 : 0; });
      gauge("vigil_mqtt_buffered_messages", "Messages queued, not yet acknowledged by the broker",
            [](const MqttClient& m) { return m.bufferedNow(); });
      counter("vigil_mqtt_messages_published_total", "Messages the broker acknowledged",
              [](const MqttClient& m) { return m.published(); });
      counter("vigil_mqtt_messages_dropped_total",
              "Messages lost to a full offline buffer (mqtt.buffer_messages)",
              [](const MqttClient& m) { return m.dropped(); });
      counter("vigil_mqtt_reconnects_total", "Connection attempts after the first",
              [](const MqttClient& m) { return m.reconnects(); });
    }
  }

  // Declared on first use and shared by every camera; the children come and go with cameras.
  void addCameraMetrics(const std::string& name, const std::shared_ptr<CameraChannel>& channel) {
    for (const CameraCounterMetric& m : kCameraCounterMetrics) {
      metrics_.callbackCounter(m.name, m.help, {"camera"})
          .add({name}, [channel, field = m.field]() -> std::optional<double> {
            return static_cast<double>((channel->counters().*field).load());
          });
    }
    metrics_.callbackGauge(kCameraUp.name, kCameraUp.help, {"camera"})
        .add({name}, [channel]() -> std::optional<double> {
          return channel->counters().up.load() ? 1 : 0;
        });
    metrics_.callbackGauge(kPersonPresent.name, kPersonPresent.help, {"camera"})
        .add({name}, [this, name]() -> std::optional<double> {
          auto state = publisher_->state(name);
          return state ? std::optional<double>(state->present ? 1 : 0) : std::nullopt;
        });
    metrics_.callbackGauge(kPersons.name, kPersons.help, {"camera"})
        .add({name}, [this, name]() -> std::optional<double> {
          auto state = publisher_->state(name);
          return state ? std::optional<double>(state->count) : std::nullopt;
        });
    for (MotionState s : kMotionStates) {
      metrics_.callbackGauge(kMotionState.name, kMotionState.help, {"camera", "state"})
          .add({name, std::string(motionStateName(s))}, [channel, s]() -> std::optional<double> {
            return channel->counters().motionState.load() == static_cast<int>(s) ? 1 : 0;
          });
    }
    metrics_.callbackCounter(kGatedSeconds.name, kGatedSeconds.help, {"camera"})
        .add({name}, [this, name]() -> std::optional<double> {
          auto it = views_.find(name);
          return it != views_.end() ? std::optional<double>(it->second.gatedSeconds) : std::nullopt;
        });
  }

  void removeCameraMetrics(const std::string& name) {
    for (const CameraCounterMetric& m : kCameraCounterMetrics) {
      metrics_.callbackCounter(m.name, m.help, {"camera"}).remove({name});
    }
    for (const MetricText* m : {&kCameraUp, &kPersonPresent, &kPersons}) {
      metrics_.callbackGauge(m->name, m->help, {"camera"}).remove({name});
    }
    for (MotionState s : kMotionStates) {
      metrics_.callbackGauge(kMotionState.name, kMotionState.help, {"camera", "state"})
          .remove({name, std::string(motionStateName(s))});
    }
    metrics_.callbackCounter(kGatedSeconds.name, kGatedSeconds.help, {"camera"}).remove({name});
    captureToPublish_->remove({name});
  }

  // Package joules per detected frame over the last window: the whole package (every process
  // on the box), so an upper bound on what one inference costs; absent without RAPL.
  void updateEnergyPerInference(SteadyClock::time_point now) {
    if (now - energySince_ < kRateWindow) return;
    auto joules = power_->packageEnergyJoules();
    std::uint64_t frames = worker_ ? worker_->inferences() : 0;
    if (joules && energyBase_ && frames > inferencesBase_) {
      energyPerInference_ =
          (*joules - *energyBase_) / static_cast<double>(frames - inferencesBase_);
    } else if (!joules) {
      energyPerInference_.reset();
    }
    energyBase_ = joules;
    inferencesBase_ = frames;
    energySince_ = now;
  }

  void updateRates() {
    const auto now = SteadyClock::now();
    updateEnergyPerInference(now);
    for (const auto& [name, camera] : cameras_) {
      CameraView& view = views_[name];
      CameraCounters& c = camera->channel()->counters();
      const std::uint64_t gated = c.gated.load();
      view.gatedSeconds += static_cast<double>(gated - view.gatedPriced) * meanDetectorSeconds_;
      view.gatedPriced = gated;
      // An event ends by time (clear_after) as well as by frames: tell the gate here too.
      updatePersonPresent(c, view, publisher_->state(name));
      if (view.rateSince == SteadyClock::time_point{}) {
        view.rateSince = now;
        view.capturedSince = c.captured.load();
        view.detectedSince = c.detected.load();
        continue;
      }
      double dt = std::chrono::duration<double>(now - view.rateSince).count();
      if (dt < std::chrono::duration<double>(kRateWindow).count()) continue;
      view.fpsCaptured = static_cast<double>(c.captured.load() - view.capturedSince) / dt;
      view.fpsDetected = static_cast<double>(c.detected.load() - view.detectedSince) / dt;
      view.rateSince = now;
      view.capturedSince = c.captured.load();
      view.detectedSince = c.detected.load();
    }
  }

  // `presence`: the camera's presence state now (EventPublisher::state).
  void updatePersonPresent(CameraCounters& counters, const CameraView& view,
                           const std::optional<PresenceTracker::State>& presence) {
    MotionGate::Person person = MotionGate::Person::kNone;
    if (view.lastHadPerson) {
      person = MotionGate::Person::kSeen;
    } else if (presence && presence->present) {
      person = MotionGate::Person::kPresent;
    }
    counters.person.store(static_cast<int>(person), std::memory_order_relaxed);
  }

  // Liveness: every long-running thread kept its last promise to show life (heartbeat.h).
  HttpResponse health() {
    std::string problems;
    auto describe = [&](const std::string& who, const Heartbeat& beat) {
      if (auto late = beat.overdueBy()) {
        problems += fmt::format("{}: no sign of life, {:.1f} s past its deadline\n", who,
                                std::chrono::duration<double>(*late).count());
      }
    };
    if (worker_) describe("inference worker", worker_->heartbeat());
    for (const auto& [name, camera] : cameras_) {
      describe(fmt::format("[cam={}] capture thread", name),
               camera->channel()->counters().heartbeat);
    }
    if (!problems.empty()) return textResponse(503, problems);
    return textResponse(200, "ok\n");
  }

  // Readiness: the model is loaded and passed its checks, every enabled camera was started.
  HttpResponse readiness() {
    std::string body;
    bool ready = worker_ != nullptr;
    body += worker_ ? fmt::format("detector: ready ({} on {})\n", backendStatus_->inUse().name,
                                  backendStatus_->inUse().device)
                    : "detector: not loaded\n";
    for (const CameraConfig& c : config_.cameras) {
      if (!c.enabled) continue;
      auto it = cameras_.find(c.name);
      if (it == cameras_.end()) {
        ready = false;
        body += fmt::format("[cam={}] not started\n", c.name);
        continue;
      }
      body += fmt::format("[cam={}] started, {}\n", c.name, cameraStateName(it->second->state()));
    }
    return textResponse(ready ? 200 : 503, body);
  }

  nlohmann::json status() {
    nlohmann::json cameras = nlohmann::json::array();
    for (const auto& [name, camera] : cameras_) {
      const CameraView& v = views_[name];
      const CameraCounters& c = camera->channel()->counters();
      auto presence = publisher_->state(name);
      // The camera's last state reason is an error only when it is not streaming.
      const CameraState state = camera->state();
      std::string lastError = state == CameraState::kStreaming ? "" : camera->lastError();
      cameras.push_back({
          {"name", name},
          {"source", redactCredentials(camera->config().source)},
          {"state", cameraStateName(state)},
          {"up", c.up.load()},
          {"last_error", lastError.empty() ? nlohmann::json(nullptr) : nlohmann::json(lastError)},
          {"fps_captured", v.fpsCaptured},
          {"fps_detected", v.fpsDetected},
          {"present", presence && presence->present},
          {"persons", presence ? presence->count : 0},
          {"last_person",
           v.lastPerson ? nlohmann::json(isoUtc(*v.lastPerson)) : nlohmann::json(nullptr)},
          {"has_frame", v.hasFrame},
          {"latency_ms",
           {{"p50", percentile(v.latencyMs, 0.5)},
            {"p99", percentile(v.latencyMs, 0.99)},
            {"samples", v.latencyMs.size()}}},
          {"frames", frameCounts(c)},
          {"motion",
           {{"enabled", camera->config().motion.enabled},
            {"state", motionStateName(static_cast<MotionState>(c.motionState.load()))},
            {"gated_detector_seconds_estimate", v.gatedSeconds}}},
      });
    }
    nlohmann::json mqtt = nullptr;
    if (mqtt_) {
      std::string lastError = mqtt_->lastError();
      mqtt = {
          {"url", config_.mqtt.url},
          {"connected", mqtt_->connected()},
          {"published", mqtt_->published()},
          {"dropped", mqtt_->dropped()},
          {"buffered", mqtt_->bufferedNow()},
          {"last_error", lastError.empty() ? nlohmann::json(nullptr) : nlohmann::json(lastError)}};
    }
    return {
        {"version", VIGIL_VERSION},
        {"uptime_seconds", std::chrono::duration<double>(SteadyClock::now() - startedAt_).count()},
        {"backend", backendStatus_->json()},
        {"detector",
         {{"model", worker_ ? worker_->detector().manifest().name : ""},
          {"failures", worker_ ? worker_->failures() : 0},
          {"invalid_outputs", worker_ ? worker_->invalidOutputs() : 0}}},
        {"mqtt", mqtt},
        {"events_published", publisher_->eventsPublished()},
        {"cameras", cameras},
    };
  }

  // /api/cameras/<name>/latest.jpg: the newest detected frame with its boxes drawn.
  HttpResponse latestJpeg(const std::string& subpath) {
    constexpr std::string_view kSuffix = "/latest.jpg";
    if (!subpath.ends_with(kSuffix))
      return textResponse(404, "try /api/cameras/<name>/latest.jpg\n");
    const std::string name = subpath.substr(0, subpath.size() - kSuffix.size());
    auto it = views_.find(name);
    if (it == views_.end() || cameras_.count(name) == 0) {
      return textResponse(404, fmt::format("no camera named '{}'\n", name));
    }
    const CameraView& view = it->second;
    if (!view.hasFrame)
      return textResponse(404, fmt::format("[cam={}] no frame detected yet\n", name));
    view.latest.copyTo(annotated_);
    drawDetections(annotated_, view.latestDetections,
                   worker_->detector().manifest().postprocess.classNames);
    std::vector<unsigned char> jpeg;
    if (!cv::imencode(".jpg", annotated_, jpeg, {cv::IMWRITE_JPEG_QUALITY, 80})) {
      return textResponse(500, "cannot encode the frame\n");
    }
    HttpResponse r;
    r.contentType = "image/jpeg";
    r.body.assign(jpeg.begin(), jpeg.end());
    r.headers.emplace_back("Cache-Control", "no-store");
    return r;
  }

  void tickPresence() {
    presenceTimer_.expires_after(kPresenceTick);
    presenceTimer_.async_wait([this](boost::system::error_code ec) {
      if (ec) return;
      publisher_->tick(std::chrono::system_clock::now());
      for (const auto& [name, camera] : cameras_) {
        publisher_->setCameraAvailable(name, camera->channel()->counters().up.load());
      }
      updateRates();
      if (backendStatus_->poll()) onBackendChanged();
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
    const std::string reason = backendReason(config, **detector);
    const bool substituted =
        config.backend != (*detector)->backend().name() && config.backend != "auto";
    if (substituted || !(*detector)->autoFallback().empty()) {
      log_->warn("detector: {}", reason);
    }
    backendStatus_->reset(config.backend, (*detector)->backend(), reason);
    publisher_->setStatusAttributes(backendStatus_->json().dump());
    if (worker_) worker_->stop();
    worker_ = std::make_unique<InferenceWorker>(
        std::move(*detector), scheduler_, [this](FrameResult&& result) {
          asio::post(io_, [this, r = std::move(result)]() { onResult(r); });
        });
    worker_->start();
    return true;
  }

  // `auto` switched between the NPU and the CPU (BackendStatus::poll): the backend's own log
  // line said why; here the status attributes follow.
  void onBackendChanged() {
    const BackendStatus::InUse& now = backendStatus_->inUse();
    if (now.name == "npu") {
      log_->info("detector: backend in use is now npu ({})", now.device);
    } else {
      log_->warn("detector: backend in use is now {} ({})", now.name, now.reason);
    }
    publisher_->setStatusAttributes(backendStatus_->json().dump());
    notifier_.status(statusLine());
  }

  void startCamera(const CameraConfig& c) {
    if (!c.enabled) {
      log_->info("[cam={}] disabled in the configuration", c.name);
      return;
    }
    auto camera = std::make_unique<Camera>(c, scheduler_);
    addCameraMetrics(c.name, camera->channel());
    views_[c.name].captureToPublish = captureToPublish_->labels({c.name});
    camera->start();
    log_->info("[cam={}] started: {} source {}, detect {} fps{}", c.name, sourceKindName(c.kind),
               redactCredentials(c.location), c.detectFps,
               c.motion.enabled
                   ? fmt::format(", motion gating (idle after {} s: every {} s)",
                                 std::chrono::duration<double>(c.motion.idleAfter).count(),
                                 std::chrono::duration<double>(c.motion.idleDetectInterval).count())
                   : std::string());
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
    const bool hasPerson = std::any_of(r.detections.begin(), r.detections.end(),
                                       [](const Detection& d) { return d.classId == 0; });
    view.lastHadPerson = hasPerson;
    const auto presence = publisher_->state(r.camera);
    if (presence && presence->present) {
      if (view.events.empty() || view.events.back().first != presence->start) {
        view.events.emplace_back(presence->start, presence->startSequence);
      }
    }
    if (auto it = cameras_.find(r.camera); it != cameras_.end()) {
      updatePersonPresent(it->second->channel()->counters(), view, presence);
    }
    // The price of a gated frame: what the detector spends per frame, recently.
    const double detectorSeconds =
        seconds(r.timings.preprocessMs + r.timings.inferenceMs + r.timings.postprocessMs);
    meanDetectorSeconds_ =
        meanDetectorSeconds_ == 0
            ? detectorSeconds
            : meanDetectorSeconds_ + 0.05 * (detectorSeconds - meanDetectorSeconds_);

    const auto published = SteadyClock::now();
    stages_["capture_to_start"]->observe(
        std::chrono::duration<double>(r.startTime - r.captureTime).count());
    stages_["preprocess"]->observe(seconds(r.timings.preprocessMs));
    stages_["inference"]->observe(seconds(r.timings.inferenceMs));
    stages_["postprocess"]->observe(seconds(r.timings.postprocessMs));
    stages_["publish"]->observe(std::chrono::duration<double>(published - steadyNow).count());
    if (view.captureToPublish) {
      view.captureToPublish->observe(
          std::chrono::duration<double>(published - r.captureTime).count());
    }
    // The status page's picture: copied into a reused buffer, encoded only when asked for.
    if (r.frame) {
      r.frame->image.copyTo(view.latest);
      view.latestDetections = r.detections;
      view.hasFrame = true;
    }
    if (hasPerson) view.lastPerson = frame.captureTime;
  }

  void reload() {
    log_->info("SIGHUP: reloading {}", options_.configPath.string());
    notifier_.reloading();
    // Whatever happens below, systemd hears that the reload is over.
    struct ReadyAgain {
      Daemon* daemon;
      ~ReadyAgain() { daemon->notifier_.ready(daemon->statusLine()); }
    } readyAgain{this};
    auto next = loadConfig(options_.configPath);
    if (!next) {
      log_->error("reload rejected, the running configuration stays: {}", next.error().message);
      return;
    }
    for (const std::string& warning : next->warnings) log_->warn("{}", warning);
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
    auto goes = [&](const std::string& name, const Camera& camera) {
      auto w = wanted.find(name);
      return w == wanted.end() || !(*w->second == camera.config());
    };
    // The cameras that go wind down side by side: every one is asked first, then each joined.
    for (auto& [name, camera] : cameras_) {
      if (goes(name, *camera)) camera->requestStop();
    }
    for (auto it = cameras_.begin(); it != cameras_.end();) {
      if (goes(it->first, *it->second)) {
        const bool removedFromFile = wanted.count(it->first) == 0;
        it->second->stop();
        removeCameraMetrics(it->first);
        views_.erase(it->first);
        it = cameras_.erase(it);
        removedFromFile ? ++removed : ++restarted;
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
    if (!(next->http == config_.http)) {
      log_->warn("reload: the http section changed; it takes effect at the next restart");
      next->http = config_.http;
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
    if (http_) http_->stop();
    // Cameras first, so no thread offers frames to a stopped scheduler; all asked at once, so
    // that they wind down side by side (a source blocked in a network read is interrupted).
    for (auto& [name, camera] : cameras_) camera->requestStop();
    for (auto& [name, camera] : cameras_) camera->stop();
    if (worker_) worker_->stop();
    if (publisher_) {
      publisher_->endAll(std::chrono::system_clock::now());
      for (const auto& [name, camera] : cameras_) publisher_->setCameraAvailable(name, false);
    }
    // Clean stop: status offline, then a clean disconnect, so the broker sends no last will.
    if (mqtt_) mqtt_->stop(publisher_->statusTopic(), "offline");
  }

  // `cpuSeconds`: the process's CPU time from the start of the cameras to the stop.
  void writeSummary(const std::map<std::string, CameraState>& states, double cpuSeconds) {
    double seconds = std::chrono::duration<double>(SteadyClock::now() - startedAt_).count();
    nlohmann::json cameras = nlohmann::json::object();
    for (const auto& [name, camera] : cameras_) {
      const CameraCounters& c = camera->channel()->counters();
      const CameraView& v = views_[name];
      double p50 = percentile(v.latencyMs, 0.5);
      double p99 = percentile(v.latencyMs, 0.99);
      log_->info(
          "[cam={}] {} captured, {} detected ({:.2f}/s), {} skipped, {} dropped, {} gated, {} "
          "decode errors, {} lost, {} reconnects, latency p50 {:.0f} ms p99 {:.0f} ms",
          name, c.captured.load(), c.detected.load(),
          seconds > 0 ? static_cast<double>(c.detected.load()) / seconds : 0.0, c.skipped.load(),
          c.dropped.load(), c.gated.load(), c.decodeErrors.load(), c.lost.load(),
          c.reconnects.load(), p50, p99);
      nlohmann::json events = nlohmann::json::array();
      for (const auto& [start, sequence] : v.events) {
        events.push_back({{"start", isoUtc(start)}, {"start_frame", sequence}});
      }
      nlohmann::json entry = frameCounts(c);
      entry.update({{"gated_detector_seconds_estimate", v.gatedSeconds},
                    {"state", cameraStateName(states.at(name))},
                    {"latency_ms", {{"p50", p50}, {"p99", p99}, {"samples", v.latencyMs.size()}}},
                    {"person_events", events}});
      cameras[name] = std::move(entry);
    }
    if (options_.summaryJson.empty()) return;
    nlohmann::json summary = {{"seconds", seconds},
                              {"cpu_seconds", cpuSeconds},
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
    if (!out) {
      log_->error("--summary-json {}: cannot write the summary: {}", options_.summaryJson.string(),
                  std::strerror(errno));
    }
  }

  // The summary is written at the stop; a run of hours must not find out only then that it
  // cannot be. Creates the file (empty) if it does not exist, as the stop would.
  bool summaryIsWritable() {
    if (options_.summaryJson.empty()) return true;
    const int fd = ::open(options_.summaryJson.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      log_->error("--summary-json {}: cannot write there: {}", options_.summaryJson.string(),
                  std::strerror(errno));
      return false;
    }
    ::close(fd);
    return true;
  }

  RunOptions options_;
  std::shared_ptr<spdlog::logger> log_ = logger("daemon");
  asio::io_context io_;
  asio::signal_set signals_;
  Config config_;
  Scheduler scheduler_;
  asio::steady_timer presenceTimer_;
  asio::steady_timer watchdogTimer_{io_};
  asio::steady_timer heapTimer_{io_};
  SystemdNotifier notifier_;
  bool watchdogWarned_ = false;
  Registry metrics_;
  HistogramFamily* stageSeconds_ = nullptr;
  std::map<std::string, std::shared_ptr<Histogram>> stages_;
  HistogramFamily* captureToPublish_ = nullptr;
  std::unique_ptr<BackendStatus> backendStatus_;
  std::shared_ptr<PowerMonitor> power_;
  std::optional<double> energyPerInference_;
  std::optional<double> energyBase_;
  std::uint64_t inferencesBase_ = 0;
  SteadyClock::time_point energySince_{};
  std::unique_ptr<HttpServer> http_;
  cv::Mat annotated_;  // reused by latestJpeg()
  std::string metricsText_;
  SteadyClock::time_point metricsRenderedAt_{};
  std::unique_ptr<MqttClient> mqtt_;
  std::unique_ptr<EventPublisher> publisher_;  // after mqtt_: it publishes through it
  int mqttConnects_ = 0;
  std::unique_ptr<InferenceWorker> worker_;
  std::map<std::string, std::unique_ptr<Camera>> cameras_;
  std::map<std::string, CameraView> views_;
  double meanDetectorSeconds_ = 0;  // moving average over recent frames, all cameras
  SteadyClock::time_point startedAt_;
};

}  // namespace

int runDaemon(const RunOptions& options) {
  Daemon daemon(options);
  return daemon.run();
}

}  // namespace vigil
