#include "daemon/capture/camera/camera.h"

#include "daemon/base/log.h"
#include "daemon/capture/camera/stream_health.h"
#include "daemon/capture/ffmpeg/file_source.h"
#include "daemon/capture/ffmpeg/network_source.h"
#include "daemon/capture/v4l2/v4l2_source.h"

namespace vigil {

namespace {

// Frames per camera: one being filled by capture, one waiting in the slot, one in the detector,
// one in its result on the way to the publisher.
constexpr std::size_t kFramesPerCamera = 4;
// Opening a stream may take this long (FFmpeg's own network timeouts) before it fails.
constexpr std::chrono::seconds kOpenLimit{60};

}  // namespace

std::unique_ptr<FrameSource> makeFrameSource(const CameraConfig& camera) {
  switch (camera.kind) {
    case SourceKind::kV4l2:
      return makeV4l2Source(camera);
    case SourceKind::kRtsp:
    case SourceKind::kHttp:
      return makeNetworkSource(camera);
    case SourceKind::kFile:
      break;
  }
  return makeFileSource(camera);
}

Camera::Camera(CameraConfig config, std::shared_ptr<FrameSink> sink, SourceFactory factory,
               BackoffPolicy backoff)
    : config_(std::move(config)),
      sink_(std::move(sink)),
      factory_(std::move(factory)),
      backoff_(backoff),
      pool_(FramePool::create(kFramesPerCamera)),
      status_(config_.name, sink_->counters()) {
  if (config_.calibrationSamples.enabled()) {
    sampler_.emplace(config_.calibrationSamples, config_.name);
  }
}

Camera::~Camera() {
  // Left behind: stopped already, and its thread (detached) is done or is the one deleting.
  if (thread_.leftBehind() == nullptr) stop();
}

void Camera::start(std::shared_ptr<ThreadEnd> after) {
  if (thread_.joinable()) return;
  stopping_ = false;
  sink_->attach();
  status_.setState(CameraState::kStarting);
  thread_.start([this] { run(); }, config_.name, std::move(after));
}

void Camera::Retire::operator()(Camera* camera) const {
  if (camera == nullptr) return;
  if (!camera->thread_.handOver([camera] { delete camera; })) delete camera;
}

void Camera::requestStop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    if (source_ != nullptr) source_->interrupt();
  }
  stopWake_.notify_all();
  thread_.wakeAwaitPredecessor();
}

void Camera::stop() {
  requestStop();
  thread_.join();
  finishStop();
}

bool Camera::stopBy(SteadyClock::time_point deadline) {
  requestStop();
  const bool ended = !thread_.joinable() || thread_.joinBy(deadline);
  if (!ended) {
    // A frame offered before the stop is through; any later one sees the stop (handOff).
    std::lock_guard barrier(offerMutex_);
    logger("capture")->warn(
        "[cam={}] the capture thread did not end after the stop ({}; a read that nothing "
        "interrupts, such as a file on a share that stopped answering): left to end on its own",
        config_.name, cameraStateName(status_.state()));
  }
  finishStop();
  return ended;
}

std::shared_ptr<Camera::ThreadEnd> Camera::threadLeftBehind() const { return thread_.leftBehind(); }

void Camera::finishStop() {
  sink_->detach();
  status_.setState(CameraState::kStopped);
  sink_->counters().up = false;
}

bool Camera::sleepFor(std::chrono::milliseconds d) {
  sink_->counters().heartbeat.expectWithin(d + kHeartbeatGrace);
  std::unique_lock lock(mutex_);
  return !stopWake_.wait_for(lock, d, [this] { return stopping_.load(); });
}

// The capture thread's state across the sessions of one run().
struct Camera::Supervision {
  ReopenBackoff reopen;
  Frame scratch;  // receives frames that are dropped because the pool is empty
  StreamHealth health;
};

bool Camera::awaitPredecessor() {
  // As long as an open may take: a predecessor that never ends makes this camera overdue, as
  // if it were stuck itself (it is, on the same source).
  sink_->counters().heartbeat.expectWithin(kOpenLimit + kHeartbeatGrace);
  status_.set(CameraState::kStarting,
              "waiting for the previous capture thread to end (a read that nothing interrupts)");
  return thread_.awaitPredecessor(stopping_);
}

void Camera::run() {
  CapturedPicture::markCaptureThread();
  if (thread_.hasPredecessor() && !awaitPredecessor()) {
    sink_->counters().heartbeat.idle();
    return;
  }
  std::unique_ptr<FrameSource> source = factory_(config_);
  shareSource(source.get());
  CameraCounters& counters = sink_->counters();
  Supervision supervision{
      ReopenBackoff(backoff_, counters), {}, StreamHealth(config_.name, counters)};
  while (!stopping_) {
    counters.heartbeat.expectWithin(kOpenLimit + kHeartbeatGrace);
    auto info = source->open();
    supervision.health.chargeCpu();
    if (!info) {
      // A stop (a reload, the daemon's end) interrupts an open under way: no failure to count
      // or warn about.
      if (stopping_) break;
      supervision.reopen.openFailed(info.error());
      status_.set(CameraState::kReconnecting, info.error().message);
      if (!backOff(supervision.reopen)) break;
      continue;
    }
    supervision.reopen.opened();
    const StreamEnd end = stream(*source, *info, supervision);
    source->close();
    if (stopping_) break;
    if (end.ended) {
      status_.set(CameraState::kEnded, end.reason);
      waitForStop();
      break;
    }
    status_.set(CameraState::kReconnecting, end.reason);
    if (!backOff(supervision.reopen)) break;
  }
  source->close();
  shareSource(nullptr);
  supervision.health.chargeCpu();
  counters.heartbeat.idle();
}

void Camera::shareSource(FrameSource* source) {
  std::lock_guard lock(mutex_);
  source_ = source;
  if (source != nullptr && stopping_) source->interrupt();
}

StreamEnd Camera::stream(FrameSource& source, const SourceInfo& info, Supervision& supervision) {
  StreamSession session({config_, backoff_.stallTimeout, *sink_, *pool_, status_,
                         supervision.health, supervision.scratch, stopping_,
                         [this](FrameHandle frame, SteadyClock::time_point captured) {
                           handOff(std::move(frame), captured);
                         }});
  StreamEnd end = session.run(source, info);
  if (session.streamed()) supervision.reopen.streamed();
  return end;
}

void Camera::handOff(FrameHandle frame, SteadyClock::time_point captured) {
  if (sampler_) sampler_->offer(frame->picture, captured);
  if (!sink_->admit(frame->picture, captured)) return;
  std::lock_guard lock(offerMutex_);
  if (stopping_) return;  // a stop may have left this thread behind, and the scheduler gone
  sink_->offer(std::move(frame));
}

bool Camera::backOff(ReopenBackoff& reopen) {
  if (!sleepFor(reopen.delay())) return false;
  reopen.lengthened();
  return true;
}

void Camera::waitForStop() {
  sink_->counters().heartbeat.idle();
  std::unique_lock lock(mutex_);
  stopWake_.wait(lock, [this] { return stopping_.load(); });
}

}  // namespace vigil
