#include "daemon/service/daemon.h"

// clang-format off
// Boost 1.74's asio uses std::exchange without including <utility> (fails with g++ 12, C++20).
#include <utility>
#include <boost/asio.hpp>
// clang-format on

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

#include "daemon/base/log.h"
#include "daemon/config/config_file.h"
#include "daemon/events/result_path.h"
#include "daemon/history/event_history.h"
#include "daemon/metrics/daemon_metrics.h"
#include "daemon/metrics/heap.h"
#include "daemon/mqtt/mqtt_figures.h"
#include "daemon/mqtt/publishing.h"
#include "daemon/pipeline/camera_set.h"
#include "daemon/pipeline/detector_loading.h"
#include "daemon/pipeline/scheduler.h"
#include "daemon/service/control_signals.h"
#include "daemon/service/daemon_snapshot.h"
#include "daemon/service/run_summary.h"
#include "daemon/service/running_detector.h"
#include "daemon/service/systemd_notify.h"
#include "daemon/service/watchdog_pinger.h"
#include "daemon/status/http_endpoint.h"
#include "foundation/background_work.h"

namespace vigil {

namespace {

namespace asio = boost::asio;

// What /metrics reads of a camera's pipeline and its picture stream (picture_source).
DaemonMetrics::CameraFigures cameraFigures(std::shared_ptr<CameraChannel> channel,
                                           std::shared_ptr<PictureStream> pictures) {
  return {[channel, pictures](FigureWriter& out) {
            channel->report(out);
            if (pictures) pictures->report(out);
          },
          [channel] { return channel->counters().decoder(); }};
}

// The loaded detector's figures for /metrics: none while the slot is empty (before the first
// load), whichever worker a reload put there after.
FigureSeries::Report workerFigures(const std::unique_ptr<InferenceWorker>& slot) {
  return [&slot](FigureWriter& out) {
    if (slot) slot->counters().report(out);
  };
}

// The MQTT client's figures for /metrics; none without MQTT.
FigureSeries::Report mqttFigures(const MqttClient* client) {
  if (client == nullptr) return {};
  return [client](FigureWriter& out) { reportMqttFigures(*client, out); };
}

// The loaded detector's class names, for the page's boxes; none before it loaded.
std::vector<std::string> classNamesOf(const InferenceWorker* worker) {
  return worker != nullptr ? worker->classNames() : std::vector<std::string>();
}

constexpr auto kPresenceTick = std::chrono::milliseconds(250);
constexpr auto kHeapReleasePeriod = std::chrono::seconds(60);

// --state-dir, else systemd's $STATE_DIRECTORY (its first directory), else none (empty), and
// made if missing; empty, and why, when it cannot be made.
std::filesystem::path stateDirectory(const RunOptions& options, std::string& why) {
  std::filesystem::path dir = options.stateDir;
  if (const char* env = std::getenv("STATE_DIRECTORY"); dir.empty() && env != nullptr) {
    const std::string dirs(env);
    dir = dirs.substr(0, dirs.find(':'));
  }
  if (dir.empty()) {
    why = "no --state-dir and no $STATE_DIRECTORY";
    return {};
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    why = fmt::format("cannot make the state directory {}: {}", dir.string(), ec.message());
    return {};
  }
  return dir;
}

std::filesystem::path lineCountsFile(const std::filesystem::path& stateDir, const std::string& why,
                                     const Config& config) {
  const bool lines = std::any_of(config.cameras.begin(), config.cameras.end(),
                                 [](const CameraConfig& c) { return !c.lines.empty(); });
  if (stateDir.empty()) {
    if (lines) {
      logger("daemon")->warn("line counts start at 0 and are not kept across restarts: {}", why);
    }
    return {};
  }
  if (lines) {
    logger("daemon")->info("line counts kept in {}", (stateDir / "line-counts.json").string());
  }
  return stateDir / "line-counts.json";
}

// The history of events under the state directory's history/; nullptr (logged) without one.
std::unique_ptr<EventHistory> openHistory(const std::filesystem::path& stateDir,
                                          const std::string& why, const HistoryConfig& config) {
  auto log = logger("daemon");
  if (stateDir.empty()) {
    log->warn("events are not kept across restarts (no history): {}", why);
    return nullptr;
  }
  HistoryOptions options;
  options.dir = stateDir / "history";
  options.retainDays = config.retainDays;
  options.maxBytes = std::int64_t{config.maxMegabytes} << 20;
  auto history = EventHistory::open(options);
  if (!history) {
    log->error("events are not kept across restarts (no history): {}", history.error().message);
    return nullptr;
  }
  log->info("history of events in {}: {} days, at most {} MB", options.dir.string(),
            config.retainDays, config.maxMegabytes);
  return std::move(*history);
}

// The publisher (and MQTT) with what the state directory keeps: the line counts and the
// history it records into.
struct PublishingWithState {
  Publishing publishing;
  std::unique_ptr<EventHistory> history;
};
Expected<PublishingWithState> publishingWithState(const RunOptions& options, const Config& config,
                                                  PostToControl post) {
  std::string noStateDir;
  const std::filesystem::path stateDir = stateDirectory(options, noStateDir);
  auto publishing =
      makePublishing(config, std::move(post), lineCountsFile(stateDir, noStateDir, config));
  if (!publishing) return tl::unexpected(publishing.error());
  PublishingWithState out{std::move(*publishing),
                          openHistory(stateDir, noStateDir, config.history)};
  out.publishing.publisher->setRecorder(out.history.get());
  return out;
}

std::vector<PublishedCamera> publishedCameras(const Config& config) {
  std::vector<PublishedCamera> out;
  for (const CameraConfig& c : config.cameras) {
    if (c.enabled) {
      out.push_back(PublishedCamera{c.name, c.presence, c.zones, c.masks, c.lines, c.history});
    }
  }
  return out;
}

// The control thread (signals, results, MQTT, HTTP) runs at a lower priority than the capture
// and inference threads, which were started from it before this call and so keep the normal
// one: a flood of HTTP requests then takes only what detection leaves (measured in
// bench/http-metrics-load.md). Idle or lightly loaded, priorities change nothing. Threads a
// SIGHUP reload starts later inherit the lower priority (an unprivileged thread cannot raise it
// back), which only puts them level with HTTP again.
void yieldToInference() {
  constexpr int kControlNice = 5;
  if (setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kControlNice) != 0) {
    logger("daemon")->debug("cannot lower the control thread's priority: {}", std::strerror(errno));
  }
}

// Without this the resident size creeps up for an hour while the live heap stays flat
// (heap.h).
void releaseHeapPeriodically(asio::steady_timer& timer) {
  timer.expires_after(kHeapReleasePeriod);
  timer.async_wait([&timer](boost::system::error_code ec) {
    if (ec) return;
    releaseFreeHeap();
    releaseHeapPeriodically(timer);
  });
}

// What a reload cannot change while running: said, and the running value kept in `next`.
// False when the HTTP listener is among them.
bool keepWhatNeedsARestart(Config& next, const Config& running, spdlog::logger& log) {
  const bool sameListener = next.http.sameListener(running.http);
  if (!sameListener) {
    log.warn("reload: http.enabled or http.listen changed; it takes effect at the next restart");
    next.http = running.http;
  }
  if (next.node != running.node) {
    log.warn("reload: node changed to '{}'; it takes effect at the next restart", next.node);
    next.node = running.node;
  }
  if (!(next.mqtt == running.mqtt)) {
    log.warn("reload: the mqtt section changed; it takes effect at the next restart");
    next.mqtt = running.mqtt;
  }
  if (!(next.history == running.history)) {
    log.warn("reload: the history section changed; it takes effect at the next restart");
    next.history = running.history;
  }
  return sameListener;
}

// The file's log.level, at the start (`running` null) and when a reload changes it, unless
// --log-level set the level for the whole run.
void applyLogLevel(const RunOptions& options, const LogConfig& next, const LogConfig* running,
                   spdlog::logger& log) {
  if (running != nullptr && next == *running) return;
  if (!options.logLevel.empty()) {
    if (running != nullptr) {
      log.info("reload: log.level {} ignored: --log-level {} stays", logLevelName(next.level),
               options.logLevel);
    }
    return;
  }
  if (running != nullptr) {
    // Said at the more verbose of the two levels, so that it shows whichever way the level goes.
    setLogLevel(std::min(next.level, running->level));
    log.info("reload: log level {}", logLevelName(next.level));
  }
  setLogLevel(next.level);
}

// The parts wind down side by side, so that the stop takes as long as the slowest of them
// (MQTT's final delivery at most 1.5 s; a reload's load 0.5 s and the cameras 1 s when they hang),
// not their sum. The control thread is no longer running: no result reaches the publisher any
// more.
void windDown(CameraSet& cameras, DetectorReload* reload, InferenceWorker* worker,
              ResultPath* results, Publishing& publishing) {
  std::thread mqttStop;
  if (EventPublisher* publisher = publishing.publisher.get()) {
    if (results != nullptr) results->endTracks();
    publisher->endAll(std::chrono::system_clock::now());
    for (const auto& [name, camera] : cameras.cameras()) publisher->setCameraAvailable(name, false);
    // `offline` last (what a subscriber takes for the end of the stream), then a clean
    // disconnect once delivered, so that the broker sends no last will.
    if (publishing.mqtt) {
      mqttStop = std::thread([&publishing, topic = publisher->statusTopic()] {
        publishing.mqtt->stop(topic, "offline");
      });
    }
  }
  // A reload's load under way (0.5 s at most: its thread uses the worker), all cameras asked at
  // once (a source blocked in a read is interrupted), then the worker, whose inference in flight
  // is cut (cpu-ort: at the graph's next node) or ends first.
  if (reload != nullptr) reload->stop();
  cameras.stopAll();
  if (worker != nullptr) worker->stop();
  if (mqttStop.joinable()) mqttStop.join();
}

// The lifecycle: owns the parts, starts them in order (publishing, metrics, the result path,
// the detector, HTTP, the cameras), runs the control thread's io_context (signals, timers,
// results, MQTT callbacks, HTTP), reloads on SIGHUP and stops in reverse. What each part does
// is in its own room: docs/architecture.md.
class Daemon {
 public:
  explicit Daemon(RunOptions options)
      : options_(std::move(options)),
        cameras_(scheduler_,
                 {[this](const std::string& name, const Camera& camera,
                         const std::shared_ptr<CameraChannel>& channel,
                         const std::shared_ptr<PictureStream>& pictures) {
                    // Snapshots at full size: the picture stream decodes while a person is seen.
                    if (pictures) pictures->setWantedWhilePersonInView(config_.mqtt.snapshots);
                    metrics_->addCamera(
                        name, cameraFigures(channel, pictures),
                        results_->addCamera(name, channel, metrics_->cameraHistograms(name),
                                            personTracksFor(camera.config()), pictures),
                        camera.config());
                  },
                  [this](const std::string& name) {
                    metrics_->removeCamera(name);
                    results_->removeCamera(name);
                  }}) {}

  int run() {
    if (!start()) return 1;
    signals_.listen();
    if (options_.durationSeconds) signals_.stopAfter(*options_.durationSeconds);
    startedAt_ = SteadyClock::now();
    const double cpuAtStart = processCpuSeconds();
    io_.run();
    const double cpuWhileRunning = processCpuSeconds() - cpuAtStart;
    // The summary tells each camera's state as it was while running, its counts after the stop.
    std::vector<std::string> running;  // in the camera set's order, as the snapshot lists them
    for (const auto& [name, camera] : cameras_.cameras()) {
      running.emplace_back(cameraStateName(camera->state()));
    }
    stopAll();
    DaemonSnapshot stopped = snapshot();
    for (std::size_t i = 0; i < stopped.cameras.size(); ++i) stopped.cameras[i].state = running[i];
    writeRunSummary(options_.summaryJson, stopped, *results_,
                    {stopped.uptimeSeconds, cpuWhileRunning});
    log_->info("stopped");
    return 0;
  }

 private:
  // The parts in order; false (logged) when the configuration or a part cannot be used.
  bool start() {
    auto config = loadConfig(options_.configPath);
    if (!config) {
      log_->error("{}", config.error().message);
      if (config.error().code == ErrorCode::kNotFound) {
        log_->error(
            "give the configuration with `vigil run --config FILE` (config/cameras.yaml "
            "explains every key; config/demo.yaml replays a clip as a camera)");
      }
      return false;
    }
    applyLogLevel(options_, config->log, nullptr, *log_);
    for (const std::string& warning : config->warnings) log_->warn("{}", warning);
    if (!summaryIsWritable(options_.summaryJson)) return false;
    auto publishing = publishingWithState(options_, *config,
                                          [this](std::function<void()> f) { asio::post(io_, f); });
    if (!publishing) {
      log_->error("{}", publishing.error().message);
      return false;
    }
    publishing_ = std::move(publishing->publishing);
    history_ = std::move(publishing->history);
    metrics_ = std::make_unique<DaemonMetrics>(
        registry_, DaemonMetrics::Sources{
                       workerFigures(detector_.worker()),
                       [](FigureWriter& out) { InferenceCounters().report(out); },
                       [&slot = detector_.worker()] { return slot ? slot->inferences() : 0; },
                       *publishing_.publisher, mqttFigures(publishing_.mqtt.get()), config->node});
    if (history_) {
      metrics_->addFigures([&history = *history_](FigureWriter& out) { history.report(out); });
    }
    results_ = std::make_unique<ResultPath>(*publishing_.publisher, metrics_->stageHistograms(),
                                            config->detector.minScore);
    results_->keepEventStarts(!options_.summaryJson.empty());
    if (!options_.tracksOut.empty()) {
      trackRecorder_ = std::make_unique<TrackRecorder>(options_.tracksOut);
      results_->setTrackRecorder(trackRecorder_.get());
    }
    if (!detector_.start(config->detector, scheduler_, io_, *results_,
                         [this](const DetectorReload::Outcome& out) { onDetectorReloaded(out); })) {
      return false;
    }
    publishing_.publisher->setStatusAttributes(detector_.backendStatus().json().dump());
    if (!startHttp(config->http)) return false;
    config_ = *config;
    detector_.worker()->setScaledDecode(config_.capture.scaledDecode);
    // The retained state is OFF and queued before the first frame is even captured.
    publishing_.publisher->setCameras(publishedCameras(config_));
    if (publishing_.mqtt) publishing_.mqtt->start();
    for (const CameraConfig& c : config_.cameras) cameras_.start(c);
    yieldToInference();
    tickPresence();
    releaseHeapPeriodically(heapTimer_);
    notifier_.ready(statusLine());
    watchdog_.start();
    log_->info("running {} camera(s) from {} as node '{}'; SIGHUP reloads, SIGTERM stops",
               cameras_.size(), options_.configPath.string(), config_.node);
    if (cameras_.size() == 0) log_->warn("no enabled camera in {}", options_.configPath.string());
    return true;
  }

  bool startHttp(const HttpConfig& config) {
    if (!config.enabled) {
      log_->info("HTTP: off (http.enabled is false)");
      return true;
    }
    http_ = std::make_unique<HttpEndpoint>(
        io_, config,
        StatusApi::Sources{[this] { return snapshot(); }, [this] { return heartbeats(); },
                           registry_, *results_,
                           [this] { return classNamesOf(detector_.worker().get()); },
                           publishing_.publisher->recentEvents(), history_.get()});
    if (!http_->start()) return false;
    metrics_->addFigures(
        [&counters = http_->counters()](FigureWriter& out) { counters.report(out); });
    return true;
  }

  void shutdown() {
    notifier_.stopping();
    signals_.cancel();
    io_.stop();
  }

  std::string statusLine() const {
    return fmt::format("{} camera(s), backend {}{}", cameras_.size(),
                       detector_.backendStatus().inUse().name,
                       publishing_.mqtt ? ", MQTT " + config_.mqtt.url : std::string());
  }

  void tickPresence() {
    presenceTimer_.expires_after(kPresenceTick);
    presenceTimer_.async_wait([this](boost::system::error_code ec) {
      if (ec) return;
      EventPublisher& publisher = *publishing_.publisher;
      publisher.tick(SteadyClock::now());
      for (const auto& [name, camera] : cameras_.cameras()) {
        publisher.setCameraAvailable(name, camera->counters().up.load());
      }
      const auto now = SteadyClock::now();
      metrics_->updateEnergyPerInference(now);
      metrics_->updateCameraInfo();
      results_->tick(now);
      if (detector_.backendChanged()) onBackendChanged();
      detector_.watchLoad(now);
      tickPresence();
    });
  }

  // `auto` switched between the NPU and the CPU (logged): the status attributes follow.
  void onBackendChanged() {
    publishing_.publisher->setStatusAttributes(detector_.backendStatus().json().dump());
    notifier_.status(statusLine());
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
    applyLogLevel(options_, next->log, &config_.log, *log_);
    std::string detectorNote;
    if (!loadsTheSameDetector(next->detector, config_.detector)) {
      // The rest of the file applies now; the detector section once its detector runs.
      detectorNote = detector_.reload(next->detector, config_.detector);
      next->detector = config_.detector;
    }
    results_->setReportedScore(next->detector.minScore);
    const CameraSet::Changes changes = cameras_.apply(next->cameras, config_.cameras);
    if (keepWhatNeedsARestart(*next, config_, *log_) && http_) {
      http_->reload(next->http);  // TLS, logins and headers at once, their files read again
    }
    config_ = *next;
    detector_.worker()->setScaledDecode(config_.capture.scaledDecode);
    publishing_.publisher->setCameras(publishedCameras(config_));
    log_->info("reload applied: {} camera(s) restarted, {} added, {} removed, {} running{}",
               changes.restarted, changes.added, changes.removed, cameras_.size(), detectorNote);
  }

  // The end of a DetectorReload, on the control thread.
  void onDetectorReloaded(const DetectorReload::Outcome& out) {
    detector_.reloaded(out);
    if (out.backend) {
      publishing_.publisher->setStatusAttributes(detector_.backendStatus().json().dump());
    }
    config_.detector = out.running;
    results_->setReportedScore(out.running.minScore);
    notifier_.status(statusLine());
  }

  void stopAll() {
    background::processEnding();  // work that cannot be cut is no longer waited for
    if (http_) http_->stop();
    windDown(cameras_, detector_.reloading(), detector_.worker().get(), results_.get(),
             publishing_);
  }

  SnapshotSources snapshotSources() const {
    return {cameras_,
            *results_,
            *publishing_.publisher,
            detector_.worker().get(),
            publishing_.mqtt.get(),
            history_.get(),
            detector_.backendStatus(),
            config_,
            startedAt_};
  }
  DaemonSnapshot snapshot() const { return takeSnapshot(snapshotSources()); }
  DaemonSnapshot heartbeats() const { return takeHeartbeats(snapshotSources()); }

  RunOptions options_;
  std::shared_ptr<spdlog::logger> log_ = logger("daemon");
  asio::io_context io_;
  ControlSignals signals_{io_, [this] { reload(); }, [this] { shutdown(); }};
  asio::steady_timer presenceTimer_{io_};
  asio::steady_timer heapTimer_{io_};
  SystemdNotifier notifier_;
  WatchdogPinger watchdog_{io_, notifier_, [this] { return healthResponse(heartbeats()); }};
  Config config_;
  Registry registry_;
  std::unique_ptr<EventHistory> history_;  // before publishing_: the publisher records into it
  Publishing publishing_;
  std::unique_ptr<DaemonMetrics> metrics_;  // after publishing_: its series read the publisher
  std::unique_ptr<TrackRecorder> trackRecorder_;
  std::unique_ptr<ResultPath> results_;
  Scheduler scheduler_;
  RunningDetector detector_{registry_};  // after scheduler_ and results_: its worker uses them
  std::unique_ptr<HttpEndpoint> http_;
  CameraSet cameras_;  // last: its cameras stop before anything they feed goes
  SteadyClock::time_point startedAt_;
};

}  // namespace

int runDaemon(const RunOptions& options) {
  // From the first line on, the file's errors included.
  if (auto level = logLevelNamed(options.logLevel)) setLogLevel(*level);
  int status = 0;
  {
    Daemon daemon(options);
    status = daemon.run();
  }
  // A detector load or the NPU's bring-up still runs on a detached thread (DetectorReload::stop,
  // the auto backend): the process ends here, without the static destructors it could be using.
  if (background::detachedRunning() > 0) {
    spdlog::apply_all([](const std::shared_ptr<spdlog::logger>& l) { l->flush(); });
    std::fflush(nullptr);
    std::_Exit(status);
  }
  return status;
}

}  // namespace vigil
