#include "daemon/metrics/daemon_metrics.h"

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <vector>

#include "daemon/base/log.h"
#include "daemon/metrics/heap.h"
#include "daemon/pipeline/motion.h"

namespace vigil {

namespace {

enum class SeriesType {
  kInfo,       // one series of value 1, facts as labels
  kHistogram,  // observed by the result path
  kCounter,    // read at render time (a callback)
  kGauge,      // read at render time (a callback)
};

enum class Series : std::size_t {
  kStageDuration,
  kCaptureToPublish,
  kBuildInfo,
  kNodeInfo,
  kEnergyPerInference,
  kDetectionFailures,
  kDetectorBusy,
  kInvalidOutputs,
  kEventsPublished,
  kZoneEventsPublished,
  kMqttConnected,
  kMqttBuffered,
  kMqttPublished,
  kMqttDropped,
  kMqttReconnects,
  kHttpResponses,
  kHttpBadRequests,
  kHttpReadTimeouts,
  kHttpRejected,
  kHttpEvicted,
  kHttpOpen,
  kHttpTlsHandshakeFailures,
  kHttpLoginFailures,
  kHttpLoginsThrottled,
  kHttpRefusedWithoutLogins,
  kHttpStreams,
  kHttpStreamsRefused,
  kFramesCaptured,
  kFramesSkipped,
  kFramesDropped,
  kDecodeErrors,
  kFramesLost,
  kFramesDetected,
  kReconnects,
  kOpenFailures,
  kFramesGated,
  kFramesDecoded,
  kCaptureCpu,
  kCameraUp,
  kCameraInfo,
  kCameraDecoder,
  kPersonPresent,
  kPersons,
  kZonePersonPresent,
  kZonePersons,
  kMotionState,
  kGatedSeconds,
  kTracksActive,
  kTracksStarted,
  kTrackDuration,
  kLineCrossings,
  kCount
};

struct SeriesSpec {
  Series id;
  SeriesType type;
  const char* name;
  std::array<const char*, 5> labels;  // nullptr: no more labels
  const char* help;
};

using enum SeriesType;

// Every series the daemon itself declares, in the order /metrics renders them.
constexpr SeriesSpec kDaemonSeries[] = {
    {Series::kStageDuration,
     kHistogram,
     "vigil_stage_duration_seconds",
     {"stage", "backend"},
     "Time per frame in each pipeline stage: capture_to_start (waiting for the detector), "
     "preprocess, inference, postprocess, publish; by the backend that ran the frame"},
    {Series::kCaptureToPublish,
     kHistogram,
     "vigil_capture_to_publish_seconds",
     {"camera"},
     "End to end: from the capture of a frame to its detections published"},
    {Series::kBuildInfo, kInfo, "vigil_build_info", {"version"}, "Vigil's version (value 1)"},
    {Series::kNodeInfo,
     kInfo,
     "vigil_node_info",
     {"node"},
     "This box's node name (cameras.yaml node, default the host name; value 1)"},
    {Series::kEnergyPerInference,
     kGauge,
     "vigil_package_energy_per_inference_joules",
     {},
     "Package energy (RAPL, every process) per detected frame over the last 2 s; absent "
     "without an energy source"},
    {Series::kDetectionFailures,
     kCounter,
     "vigil_detection_failures_total",
     {},
     "Frames the detector failed on (runtime errors and invalid outputs)"},
    {Series::kDetectorBusy,
     kCounter,
     "vigil_detector_busy_seconds_total",
     {},
     "Seconds the shared detector spent detecting; its rate near 1 means the cameras wait for it "
     "(raise detector.threads)"},
    {Series::kInvalidOutputs,
     kCounter,
     "vigil_invalid_outputs_total",
     {},
     "Inferences the runtime reported as successful whose output was NaN, Inf or malformed"},
    {Series::kEventsPublished,
     kCounter,
     "vigil_events_published_total",
     {},
     "Presence events (new, update, end) published"},
    {Series::kZoneEventsPublished,
     kCounter,
     "vigil_zone_events_published_total",
     {},
     "Zone events of tracked persons (enter, leave, loiter) published"},
    {Series::kMqttConnected,
     kGauge,
     "vigil_mqtt_connected",
     {},
     "1 while connected to the MQTT broker"},
    {Series::kMqttBuffered,
     kGauge,
     "vigil_mqtt_buffered_messages",
     {},
     "Messages queued, not yet acknowledged by the broker"},
    {Series::kMqttPublished,
     kCounter,
     "vigil_mqtt_messages_published_total",
     {},
     "Messages the broker acknowledged"},
    {Series::kMqttDropped,
     kCounter,
     "vigil_mqtt_messages_dropped_total",
     {},
     "Messages lost to a full offline buffer (mqtt.buffer_messages)"},
    {Series::kMqttReconnects,
     kCounter,
     "vigil_mqtt_reconnects_total",
     {},
     "Connection attempts after the first"},
    {Series::kHttpResponses,
     kCounter,
     "vigil_http_responses_total",
     {"code"},
     "HTTP responses by status class"},
    {Series::kHttpBadRequests,
     kCounter,
     "vigil_http_bad_requests_total",
     {},
     "Malformed or oversized requests (400, 413, 431)"},
    {Series::kHttpReadTimeouts,
     kCounter,
     "vigil_http_read_timeouts_total",
     {},
     "Connections closed with a request half received"},
    {Series::kHttpRejected,
     kCounter,
     "vigil_http_connections_rejected_total",
     {},
     "Connections refused with 503 at the connection limit (all being answered)"},
    {Series::kHttpEvicted,
     kCounter,
     "vigil_http_connections_evicted_total",
     {},
     "Connections waiting longest for a request, closed at the limit to make room"},
    {Series::kHttpOpen, kGauge, "vigil_http_connections_open", {}, "HTTP connections open now"},
    {Series::kHttpTlsHandshakeFailures,
     kCounter,
     "vigil_http_tls_handshake_failures_total",
     {},
     "TLS handshakes that failed, plain HTTP sent to the TLS listener included"},
    {Series::kHttpLoginFailures,
     kCounter,
     "vigil_http_login_failures_total",
     {},
     "Requests with a wrong or malformed login (answered 401)"},
    {Series::kHttpLoginsThrottled,
     kCounter,
     "vigil_http_logins_throttled_total",
     {},
     "Login attempts answered 429: too many failures from that address"},
    {Series::kHttpRefusedWithoutLogins,
     kCounter,
     "vigil_http_camera_views_refused_total",
     {},
     "Camera pictures and pages answered 403: not on loopback and no logins configured"},
    {Series::kHttpStreams, kGauge, "vigil_http_streams_open", {}, "Live MJPEG streams open now"},
    {Series::kHttpStreamsRefused,
     kCounter,
     "vigil_http_streams_refused_total",
     {},
     "Live streams answered 503: the most that may be open at once are"},
    {Series::kFramesCaptured,
     kCounter,
     "vigil_camera_frames_captured_total",
     {"camera"},
     "Frames read from the camera"},
    {Series::kFramesSkipped,
     kCounter,
     "vigil_camera_frames_skipped_total",
     {"camera"},
     "Frames replaced by a newer one before the detector took them (by design at detect_fps "
     "below fps)"},
    {Series::kFramesDropped,
     kCounter,
     "vigil_camera_frames_dropped_total",
     {"camera"},
     "Frames lost because every frame buffer was in use"},
    {Series::kDecodeErrors,
     kCounter,
     "vigil_camera_decode_errors_total",
     {"camera"},
     "Corrupt frames the source reported"},
    {Series::kFramesLost,
     kCounter,
     "vigil_camera_frames_lost_total",
     {"camera"},
     "Frames the device produced but never delivered (gaps in V4L2 sequence numbers)"},
    {Series::kFramesDetected,
     kCounter,
     "vigil_camera_frames_detected_total",
     {"camera"},
     "Frames the detector processed"},
    {Series::kReconnects,
     kCounter,
     "vigil_camera_reconnects_total",
     {"camera"},
     "Times the source was reopened after it had streamed and was lost (a camera that never "
     "connected: vigil_camera_open_failures_total)"},
    {Series::kOpenFailures,
     kCounter,
     "vigil_camera_open_failures_total",
     {"camera"},
     "Attempts to open the source that failed (refused, absent, wrong URL), each followed by a "
     "retry with backoff"},
    {Series::kFramesGated,
     kCounter,
     "vigil_camera_frames_gated_total",
     {"camera"},
     "Frames motion gating held back from the detector (detections that would have run "
     "without it)"},
    {Series::kFramesDecoded,
     kCounter,
     "vigil_camera_frames_decoded_total",
     {"camera"},
     "Frames turned into pixels (decoded on demand: for the detector, the motion check, the "
     "page or a snapshot); the rest were never decoded or colour-converted"},
    {Series::kCaptureCpu,
     kCounter,
     "vigil_camera_capture_cpu_seconds_total",
     {"camera"},
     "CPU time the camera's capture cost: its capture thread's own CPU clock (reading, FFmpeg's "
     "decoding, the motion check) plus its pictures' decoding on other threads"},
    {Series::kCameraUp,
     kGauge,
     "vigil_camera_up",
     {"camera"},
     "1 while the camera delivers frames"},
    {Series::kCameraInfo,
     kGauge,
     "vigil_camera_info",
     {"camera", "source", "resolution", "fps", "detect_fps"},
     "The camera's facts (value 1): source kind (v4l2, rtsp, http, file), the resolution its "
     "frames arrive in (empty before the first), the capture rate asked of a V4L2 device (\"auto\" "
     "when fps is not set: the lowest it offers at or above detect_fps; empty for streams and "
     "files, which keep their own) and detect_fps"},
    {Series::kCameraDecoder,
     kGauge,
     "vigil_camera_decoder_info",
     {"camera", "decoder"},
     "Who makes the camera's pixels (value 1), as its source said when it last opened: "
     "\"FFmpeg h264, software\", \"FFmpeg hevc, VAAPI\", \"libjpeg, on demand\", \"YUYV, converted "
     "on demand\"; "
     "with hwaccel asked for and not used, why (\"... (hwaccel vaapi: VAAPI device ...: No such "
     "file or directory)\"); empty before the first open"},
    {Series::kPersonPresent,
     kGauge,
     "vigil_person_present",
     {"camera"},
     "1 while a person is present (after min_frames)"},
    {Series::kPersons,
     kGauge,
     "vigil_persons",
     {"camera"},
     "Persons counted in the current presence event"},
    {Series::kZonePersonPresent,
     kGauge,
     "vigil_zone_person_present",
     {"camera", "zone"},
     "1 while a person is present in the zone (after its min_frames)"},
    {Series::kZonePersons,
     kGauge,
     "vigil_zone_persons",
     {"camera", "zone"},
     "Persons counted in the zone's current presence event"},
    {Series::kMotionState,
     kGauge,
     "vigil_camera_motion_state",
     {"camera", "state"},
     "Motion gating state (value 1 for the current one): off (gating disabled), motion (full "
     "detect_fps), person (still, a person present: still_detect_interval), idle (still, "
     "nobody: idle_detect_interval)"},
    {Series::kGatedSeconds,
     kCounter,
     "vigil_camera_gated_detector_seconds_estimate_total",
     {"camera"},
     "Estimated detector time saved by motion gating: each gated frame times the mean "
     "detector wall-clock time per frame (preprocess + inference + postprocess) when it was "
     "gated; an estimate, not a measurement"},
    {Series::kTracksActive,
     kGauge,
     "vigil_tracks_active",
     {"camera"},
     "Persons tracked on the camera now (confirmed tracks, a briefly missed one included); "
     "absent when the camera is not tracked"},
    {Series::kTracksStarted,
     kCounter,
     "vigil_tracks_started_total",
     {"camera"},
     "Person tracks started on the camera since it (re)started"},
    {Series::kTrackDuration,
     kHistogram,
     "vigil_track_duration_seconds",
     {"camera"},
     "How long each ended person track was seen, first to last detection"},
    {Series::kLineCrossings,
     kCounter,
     "vigil_line_crossings_total",
     {"camera", "line", "direction"},
     "Tracked persons who crossed the counting line, by direction (in: from its left-hand "
     "side to its right-hand side); continues across restarts while the line stays the same"},
};

constexpr bool tableInOrder() {
  std::size_t i = 0;
  for (const SeriesSpec& s : kDaemonSeries) {
    if (static_cast<std::size_t>(s.id) != i++) return false;
  }
  return i == static_cast<std::size_t>(Series::kCount);
}
static_assert(tableInOrder(), "kDaemonSeries lists every Series once, in enum order");

const SeriesSpec& spec(Series s) { return kDaemonSeries[static_cast<std::size_t>(s)]; }

std::vector<std::string> labelNames(const SeriesSpec& s) {
  std::vector<std::string> out;
  for (const char* l : s.labels) {
    if (l != nullptr) out.emplace_back(l);
  }
  return out;
}

// The family of a callback series (registered by the constructor; looked up again here).
CallbackFamily& callbacks(Registry& registry, Series s) {
  const SeriesSpec& d = spec(s);
  return d.type == kCounter ? registry.callbackCounter(d.name, d.help, labelNames(d))
                            : registry.callbackGauge(d.name, d.help, labelNames(d));
}

// An info series (value 1) with these labels; relabelInfo() changes one of them, replacing the
// series, when `value` differs.
void addInfo(Registry& registry, Series series, const LabelValues& labels) {
  callbacks(registry, series).add(labels, []() -> std::optional<double> { return 1; });
}

void relabelInfo(Registry& registry, Series series, LabelValues& labels, std::size_t at,
                 std::string value) {
  if (labels[at] == value) return;
  callbacks(registry, series).remove(labels);
  labels[at] = std::move(value);
  addInfo(registry, series, labels);
}

// Track durations: a passer-by's seconds to a visitor's hour.
constexpr std::array<double, 10> kTrackDurationBuckets{1, 2, 5, 10, 30, 60, 120, 300, 900, 3600};

HistogramFamily& histograms(Registry& registry, Series s) {
  const SeriesSpec& d = spec(s);
  if (s == Series::kTrackDuration) {
    return registry.histogram(d.name, d.help, labelNames(d), kTrackDurationBuckets);
  }
  return registry.histogram(d.name, d.help, labelNames(d));
}

// The camera counters each of the per-camera counter series reads.
constexpr std::pair<Series, std::atomic<std::uint64_t> CameraCounters::*> kCameraCounterFields[] = {
    {Series::kFramesCaptured, &CameraCounters::captured},
    {Series::kFramesSkipped, &CameraCounters::skipped},
    {Series::kFramesDropped, &CameraCounters::dropped},
    {Series::kDecodeErrors, &CameraCounters::decodeErrors},
    {Series::kFramesLost, &CameraCounters::lost},
    {Series::kFramesDetected, &CameraCounters::detected},
    {Series::kReconnects, &CameraCounters::reconnects},
    {Series::kOpenFailures, &CameraCounters::openFailures},
    {Series::kFramesGated, &CameraCounters::gated}};

// vigil_person_present and vigil_persons of a camera (`zone` empty), or their vigil_zone_
// twins of one of its zones: both read the publisher's presence state.
void addPresenceSeries(Registry& registry, const EventPublisher& publisher,
                       const std::string& camera, const std::string& zone) {
  const bool wholeCamera = zone.empty();
  const LabelValues labels = wholeCamera ? LabelValues{camera} : LabelValues{camera, zone};
  callbacks(registry, wholeCamera ? Series::kPersonPresent : Series::kZonePersonPresent)
      .add(labels, [&publisher, camera, zone]() -> std::optional<double> {
        auto state = publisher.state(camera, zone);
        return state ? std::optional<double>(state->present ? 1 : 0) : std::nullopt;
      });
  callbacks(registry, wholeCamera ? Series::kPersons : Series::kZonePersons)
      .add(labels, [&publisher, camera, zone]() -> std::optional<double> {
        auto state = publisher.state(camera, zone);
        return state ? std::optional<double>(state->count) : std::nullopt;
      });
}

constexpr MotionState kMotionStates[] = {MotionState::kOff, MotionState::kMotion,
                                         MotionState::kPerson, MotionState::kIdle};

constexpr auto kEnergyWindow = std::chrono::seconds(2);

std::optional<double> count(std::uint64_t v) { return static_cast<double>(v); }

}  // namespace

DaemonMetrics::DaemonMetrics(Registry& registry, Sources sources)
    : registry_(registry), sources_(sources) {
  for (const SeriesSpec& s : kDaemonSeries) {
    switch (s.type) {
      case kInfo:
        registry_.info(s.name, s.help,
                       {{s.labels[0], s.id == Series::kNodeInfo ? sources_.node : VIGIL_VERSION}});
        break;
      case kHistogram:
        histograms(registry_, s.id);
        break;
      case kCounter:
      case kGauge:
        callbacks(registry_, s.id);
        break;
    }
  }
  registerProcessMetrics(registry_);
  registerHeapMetrics(registry_);
  power_ = std::make_shared<PowerMonitor>();
  registerPowerMetrics(registry_, power_);
  addGlobalSeries();
  if (sources_.mqtt) addMqttSeries();
}

void DaemonMetrics::addGlobalSeries() {
  callbacks(registry_, Series::kEnergyPerInference).add({}, [this]() {
    return energyPerInference_;
  });
  const auto& worker = sources_.worker;
  callbacks(registry_, Series::kDetectionFailures).add({}, [&worker]() -> std::optional<double> {
    return worker ? count(worker->failures()) : std::nullopt;
  });
  callbacks(registry_, Series::kDetectorBusy).add({}, [&worker]() -> std::optional<double> {
    return worker ? std::optional<double>(worker->busySeconds()) : std::nullopt;
  });
  callbacks(registry_, Series::kInvalidOutputs).add({}, [&worker]() -> std::optional<double> {
    return worker ? count(worker->invalidOutputs()) : std::nullopt;
  });
  const EventPublisher& publisher = sources_.publisher;
  callbacks(registry_, Series::kEventsPublished).add({}, [&publisher]() {
    return count(publisher.eventsPublished());
  });
  callbacks(registry_, Series::kZoneEventsPublished).add({}, [&publisher]() {
    return count(publisher.zoneEventsPublished());
  });
}

void DaemonMetrics::addMqttSeries() {
  const MqttClient& mqtt = *sources_.mqtt;
  const std::pair<Series, std::uint64_t (*)(const MqttClient&)> reads[] = {
      {Series::kMqttConnected, [](const MqttClient& m) -> std::uint64_t { return m.connected(); }},
      {Series::kMqttBuffered, [](const MqttClient& m) -> std::uint64_t { return m.bufferedNow(); }},
      {Series::kMqttPublished, [](const MqttClient& m) -> std::uint64_t { return m.published(); }},
      {Series::kMqttDropped, [](const MqttClient& m) -> std::uint64_t { return m.dropped(); }},
      {Series::kMqttReconnects,
       [](const MqttClient& m) -> std::uint64_t { return m.reconnects(); }}};
  for (const auto& [series, read] : reads) {
    callbacks(registry_, series).add({}, [&mqtt, read = read]() { return count(read(mqtt)); });
  }
}

ResultPath::StageHistogramsFor DaemonMetrics::stageHistograms() {
  HistogramFamily* stages = &histograms(registry_, Series::kStageDuration);
  return [stages](const std::string& backend) -> ResultPath::StageHistograms {
    return {stages->labels({"capture_to_start", backend}), stages->labels({"preprocess", backend}),
            stages->labels({"inference", backend}), stages->labels({"postprocess", backend}),
            stages->labels({"publish", backend})};
  };
}

ResultPath::CameraHistograms DaemonMetrics::cameraHistograms(const std::string& camera) {
  return {histograms(registry_, Series::kCaptureToPublish).labels({camera}),
          histograms(registry_, Series::kTrackDuration).labels({camera})};
}

void DaemonMetrics::addHttp(const HttpServerCounters& counters) {
  CallbackFamily& responses = callbacks(registry_, Series::kHttpResponses);
  for (std::size_t i = 0; i < counters.responses.size(); ++i) {
    responses.add({fmt::format("{}xx", i + 1)},
                  [&counters, i]() { return count(counters.responses[i].load()); });
  }
  const std::pair<Series, const std::atomic<std::uint64_t>*> reads[] = {
      {Series::kHttpBadRequests, &counters.badRequests},
      {Series::kHttpReadTimeouts, &counters.readTimeouts},
      {Series::kHttpRejected, &counters.rejected},
      {Series::kHttpEvicted, &counters.evicted},
      {Series::kHttpOpen, &counters.open},
      {Series::kHttpTlsHandshakeFailures, &counters.tlsHandshakeFailures},
      {Series::kHttpLoginFailures, &counters.loginFailures},
      {Series::kHttpLoginsThrottled, &counters.loginsThrottled},
      {Series::kHttpRefusedWithoutLogins, &counters.refusedWithoutLogins},
      {Series::kHttpStreams, &counters.streams},
      {Series::kHttpStreamsRefused, &counters.streamsRefused}};
  for (const auto& [series, value] : reads) {
    callbacks(registry_, series).add({}, [value = value]() { return count(value->load()); });
  }
}

void DaemonMetrics::addCamera(const std::string& name,
                              const std::shared_ptr<CameraChannel>& channel, const CameraView& view,
                              const CameraConfig& config) {
  CameraSeries& added = cameras_[name];
  added.zones = zoneNames(config);
  added.view = &view;
  for (const auto& [series, field] : kCameraCounterFields) {
    callbacks(registry_, series).add({name}, [channel, field = field]() {
      return count((channel->counters().*field).load());
    });
  }
  callbacks(registry_, Series::kFramesDecoded).add({name}, [channel]() {
    return count(channel->counters().decoding->frames.load());
  });
  callbacks(registry_, Series::kCaptureCpu).add({name}, [channel]() -> std::optional<double> {
    return channel->counters().captureCpuSeconds();
  });
  callbacks(registry_, Series::kCameraUp).add({name}, [channel]() -> std::optional<double> {
    return channel->counters().up.load() ? 1 : 0;
  });
  addPresenceSeries(registry_, sources_.publisher, name, "");
  for (const std::string& zone : added.zones) {
    addPresenceSeries(registry_, sources_.publisher, name, zone);
  }
  added.info = {name, std::string(sourceKindName(config.kind)), "",
                config.kind != SourceKind::kV4l2 ? ""
                : config.fpsSet                  ? fmt::format("{}", config.fps)
                                                 : "auto",
                fmt::format("{}", config.detectFps)};
  addInfo(registry_, Series::kCameraInfo, added.info);
  added.decoder = {name, ""};
  addInfo(registry_, Series::kCameraDecoder, added.decoder);
  for (MotionState s : kMotionStates) {
    callbacks(registry_, Series::kMotionState)
        .add({name, std::string(motionStateName(s))}, [channel, s]() -> std::optional<double> {
          return channel->counters().motionState.load() == static_cast<int>(s) ? 1 : 0;
        });
  }
  callbacks(registry_, Series::kGatedSeconds).add({name}, [&view]() -> std::optional<double> {
    return view.gatedSeconds;
  });
  callbacks(registry_, Series::kTracksActive).add({name}, [&view]() -> std::optional<double> {
    if (!view.tracks) return std::nullopt;
    return static_cast<double>(view.tracks->persons().size());
  });
  callbacks(registry_, Series::kTracksStarted).add({name}, [&view]() -> std::optional<double> {
    if (!view.tracks) return std::nullopt;
    return count(view.tracks->personsStarted());
  });
  addLineSeries(name, config);
}

void DaemonMetrics::addLineSeries(const std::string& camera, const CameraConfig& config) {
  const LineCounts& counts = sources_.publisher.lineCounts();
  for (const LineSpec& line : config.lines) {
    for (CrossingDirection d : {CrossingDirection::kIn, CrossingDirection::kOut}) {
      LabelValues labels{camera, line.name, std::string(crossingDirectionName(d))};
      callbacks(registry_, Series::kLineCrossings)
          .add(labels, [&counts, camera, name = line.name, d]() -> std::optional<double> {
            auto n = counts.count(camera, name, d);
            return n ? count(*n) : std::nullopt;
          });
      cameras_[camera].lineSeries.push_back(std::move(labels));
    }
  }
}

void DaemonMetrics::removeCamera(const std::string& name) {
  for (const auto& [series, field] : kCameraCounterFields) {
    callbacks(registry_, series).remove({name});
  }
  for (Series s :
       {Series::kFramesDecoded, Series::kCaptureCpu, Series::kCameraUp, Series::kPersonPresent,
        Series::kPersons, Series::kGatedSeconds, Series::kTracksActive, Series::kTracksStarted}) {
    callbacks(registry_, s).remove({name});
  }
  for (MotionState s : kMotionStates) {
    callbacks(registry_, Series::kMotionState).remove({name, std::string(motionStateName(s))});
  }
  if (auto it = cameras_.find(name); it != cameras_.end()) {
    for (const std::string& zone : it->second.zones) {
      callbacks(registry_, Series::kZonePersonPresent).remove({name, zone});
      callbacks(registry_, Series::kZonePersons).remove({name, zone});
    }
    for (const LabelValues& labels : it->second.lineSeries) {
      callbacks(registry_, Series::kLineCrossings).remove(labels);
    }
    callbacks(registry_, Series::kCameraInfo).remove(it->second.info);
    callbacks(registry_, Series::kCameraDecoder).remove(it->second.decoder);
    cameras_.erase(it);
  }
  histograms(registry_, Series::kCaptureToPublish).remove({name});
  histograms(registry_, Series::kTrackDuration).remove({name});
}

void DaemonMetrics::updateCameraInfo() {
  for (auto& [name, camera] : cameras_) {
    const CameraView& view = *camera.view;
    relabelInfo(registry_, Series::kCameraInfo, camera.info, kInfoResolution,
                view.hasFrame
                    ? fmt::format("{}x{}", view.latest.size().width, view.latest.size().height)
                    : "");
    relabelInfo(registry_, Series::kCameraDecoder, camera.decoder, kDecoderLabel,
                view.channel->counters().decoder());
  }
}

// The whole package (every process on the box), so an upper bound on what one inference costs;
// absent without RAPL.
void DaemonMetrics::updateEnergyPerInference(SteadyClock::time_point now) {
  if (now - energySince_ < kEnergyWindow) return;
  auto joules = power_->packageEnergyJoules();
  std::uint64_t frames = sources_.worker ? sources_.worker->inferences() : 0;
  if (joules && energyBase_ && frames > inferencesBase_) {
    energyPerInference_ = (*joules - *energyBase_) / static_cast<double>(frames - inferencesBase_);
  } else if (!joules) {
    energyPerInference_.reset();
  }
  energyBase_ = joules;
  inferencesBase_ = frames;
  energySince_ = now;
}

}  // namespace vigil
