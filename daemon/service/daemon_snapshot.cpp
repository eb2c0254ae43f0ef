#include "daemon/service/daemon_snapshot.h"

#include "daemon/base/url_credentials.h"
#include "daemon/pipeline/motion.h"

namespace vigil {

namespace {

FigureList figuresOf(const CameraCounters& c) {
  FigureList figures;
  c.report(figures);
  return figures;
}

// What a capture says of its source, into a camera's snapshot or its picture stream's: the
// source (credentials redacted), its state, the last error while not streaming, up, its frames.
template <typename Snapshot>
void describeCapture(const Camera& camera, Snapshot& s) {
  s.source = redactCredentials(camera.config().source);
  s.state = cameraStateName(camera.state());
  // The camera's last state reason is an error only when it is not streaming.
  if (camera.state() != CameraState::kStreaming) s.lastError = camera.lastError();
  s.up = camera.counters().up.load();
  s.frames = figuresOf(camera.counters());
}

CameraSnapshot::PictureStream pictureStreamSnapshot(const Camera& camera, const CameraView* view) {
  CameraSnapshot::PictureStream p;
  describeCapture(camera, p);
  if (view != nullptr && view->pictures) {
    const cv::Size size = view->pictures->size();
    p.width = size.width;
    p.height = size.height;
    p.decodingAll = !view->pictures->keyframesOnly();
    p.refused = view->pictures->refused();
    p.shown = view->latestFromPictureStream;
  }
  return p;
}

CameraSnapshot cameraSnapshot(const std::string& name, const Camera& camera, const CameraView* view,
                              const EventPublisher& publisher) {
  const CameraCounters& c = camera.counters();
  CameraSnapshot s;
  s.name = name;
  describeCapture(camera, s);
  s.captureCpuSeconds = c.captureCpuSeconds();
  s.decoder = camera.counters().decoder();
  s.motionEnabled = camera.config().motion.enabled;
  s.motion = motionStateName(static_cast<MotionState>(c.motionState.load()));
  s.captureOverdue = c.heartbeat.overdueBy();
  if (auto presence = publisher.state(name)) {
    s.present = presence->present;
    s.persons = presence->count;
  }
  const CameraConfig& config = camera.config();
  s.detectFps = config.detectFps;
  for (const ZoneSpec& zone : config.zones) {
    CameraSnapshot::Zone z{zone.name, zone.polygon, false, 0};
    if (auto presence = publisher.state(name, zone.name)) {
      z.present = presence->present;
      z.persons = presence->count;
    }
    s.zones.push_back(std::move(z));
  }
  for (const LineSpec& line : config.lines) {
    const LineCounts& counts = publisher.lineCounts();
    s.lines.push_back({line, counts.count(name, line.name, CrossingDirection::kIn).value_or(0),
                       counts.count(name, line.name, CrossingDirection::kOut).value_or(0)});
  }
  s.masks = config.masks;
  s.idleDetectIntervalS = std::chrono::duration<double>(config.motion.idleDetectInterval).count();
  s.stillDetectIntervalS = std::chrono::duration<double>(config.motion.stillDetectInterval).count();
  if (view != nullptr) {
    s.gatedSeconds = view->gatedSeconds;
    s.fpsCaptured = view->fpsCaptured;
    s.captureCpuShare = view->captureCpuShare;
    s.fpsDetected = view->fpsDetected;
    s.lastPerson = view->lastPerson;
    s.hasFrame = view->hasFrame;
    s.latencyMs = view->latency.summary();
    s.tracking = view->tracks != nullptr;
    s.tracks = view->latestTracks;
    s.detectWidth = view->detectSize.width;
    s.detectHeight = view->detectSize.height;
    const CameraRegions& regions = view->channel->regions();
    s.regions.config = regions.config();
    s.regions.active = regions.active();
    if (s.regions.active) s.regions.last = regions.lastPlan();
    for (std::size_t k = 0; k < kRegionKinds; ++k) {
      s.regions.inferences[k] = regions.count(static_cast<RegionKind>(k));
    }
  }
  return s;
}

std::optional<MqttSnapshot> mqttSnapshot(const MqttClient* mqtt, const MqttConfig& config) {
  if (mqtt == nullptr) return std::nullopt;
  return MqttSnapshot{config.url,          mqtt->connected(),  mqtt->published(), mqtt->dropped(),
                      mqtt->bufferedNow(), mqtt->reconnects(), mqtt->lastError()};
}

}  // namespace

DaemonSnapshot takeSnapshot(const SnapshotSources& in) {
  DaemonSnapshot s;
  s.node = in.config.node;
  s.uptimeSeconds = std::chrono::duration<double>(SteadyClock::now() - in.startedAt).count();
  s.detectorLoaded = in.worker != nullptr;
  s.backend = {in.backend.inUse().name, in.backend.inUse().device};
  s.backendJson = in.backend.json();
  if (in.worker != nullptr) {
    s.model = in.worker->modelName();
    s.detectionFailures = in.worker->failures();
    s.invalidOutputs = in.worker->invalidOutputs();
    s.workerOverdue = in.worker->heartbeat().overdueBy();
  }
  s.mqtt = mqttSnapshot(in.mqtt, in.config.mqtt);
  s.eventsPublished = in.publisher.eventsPublished();
  if (in.history != nullptr) {
    s.history.emplace();
    s.history->pausedReason = in.history->pausedReason();
    in.history->report(s.history->figures);
  }
  for (const CameraConfig& c : in.config.cameras) {
    if (c.enabled) s.enabledCameras.push_back(c.name);
  }
  for (const auto& [name, camera] : in.cameras.cameras()) {
    const CameraView* view = in.results.view(name);
    s.cameras.push_back(cameraSnapshot(name, *camera, view, in.publisher));
    if (const Camera* pictures = in.cameras.pictureCamera(name)) {
      s.cameras.back().pictureStream = pictureStreamSnapshot(*pictures, view);
    }
  }
  return s;
}

DaemonSnapshot takeHeartbeats(const SnapshotSources& in) {
  DaemonSnapshot s;
  if (in.worker != nullptr) s.workerOverdue = in.worker->heartbeat().overdueBy();
  for (const auto& [name, camera] : in.cameras.cameras()) {
    CameraSnapshot c;
    c.name = name;
    c.captureOverdue = camera->counters().heartbeat.overdueBy();
    s.cameras.push_back(std::move(c));
  }
  return s;
}

}  // namespace vigil
