#include "daemon/capture/camera.h"

#include <algorithm>

#include "daemon/capture/file_source.h"
#include "daemon/capture/network_source.h"
#include "daemon/capture/thread_cpu.h"
#include "daemon/capture/v4l2_source.h"
#include "daemon/base/log.h"
#include "daemon/base/url_credentials.h"
#include "detector/background_work.h"

namespace vigil {

namespace {

// Frames per camera: one being filled by capture, one waiting in the slot, one in the detector,
// one in its result on the way to the publisher.
constexpr std::size_t kFramesPerCamera = 4;
constexpr std::chrono::milliseconds kReadTimeout{1000};
// Added to every heartbeat promise: a loaded machine may be late without being stuck.
constexpr std::chrono::seconds kHeartbeatGrace{10};
// Opening a stream may take this long (FFmpeg's own network timeouts) before it fails.
constexpr std::chrono::seconds kOpenLimit{60};

}  // namespace

std::uint64_t nextFrameId() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

std::string_view cameraStateName(CameraState state) {
  switch (state) {
    case CameraState::kStarting:
      return "starting";
    case CameraState::kStreaming:
      return "streaming";
    case CameraState::kReconnecting:
      return "reconnecting";
    case CameraState::kEnded:
      return "ended";
    case CameraState::kStopped:
      return "stopped";
  }
  return "unknown";
}

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
      pool_(FramePool::create(kFramesPerCamera)) {
  if (config_.calibrationSamples.enabled()) {
    sampler_.emplace(config_.calibrationSamples, config_.name);
  }
}

Camera::~Camera() {
  bool leftBehind = false;
  {
    std::lock_guard lock(end_->mutex);
    leftBehind = end_->leftBehind;
  }
  // Left behind: stopped already, and its thread (detached) is done or is the one deleting.
  if (!leftBehind) stop();
}

void Camera::start(std::shared_ptr<ThreadEnd> after) {
  if (thread_.joinable()) return;
  stopping_ = false;
  end_ = std::make_shared<ThreadEnd>();
  predecessor_ = std::move(after);
  sink_->attach();
  state_ = CameraState::kStarting;
  thread_ = std::thread(&Camera::runThread, this, end_);
}

void Camera::runThread(Camera* camera, std::shared_ptr<ThreadEnd> end) {
  camera->run();
  Camera* custody = nullptr;
  bool leftBehind = false;
  {
    std::lock_guard lock(end->mutex);
    end->done = true;
    leftBehind = end->leftBehind;
    if (leftBehind) {
      // The camera is still there: its owner deletes it only after this block, or handed it over.
      logger("capture")->info("[cam={}] the capture thread left behind by a stop has ended",
                              camera->config_.name);
    }
    custody = std::exchange(end->custody, nullptr);
  }
  end->ended.notify_all();
  delete custody;  // from here on `camera` may be gone
  if (leftBehind) background::detachedEnded();
}

void Camera::Retire::operator()(Camera* camera) const {
  if (camera == nullptr) return;
  {
    std::lock_guard lock(camera->end_->mutex);
    if (camera->end_->leftBehind && !camera->end_->done) {
      camera->end_->custody = camera;
      return;
    }
  }
  delete camera;
}

void Camera::requestStop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    if (source_ != nullptr) source_->interrupt();
  }
  stopWake_.notify_all();
  if (predecessor_) {
    // awaitPredecessor() checks the stop under this mutex: taken once, the wake cannot be lost.
    { std::lock_guard lock(predecessor_->mutex); }
    predecessor_->ended.notify_all();
  }
}

void Camera::stop() {
  requestStop();
  if (thread_.joinable()) thread_.join();
  finishStop();
}

bool Camera::stopBy(SteadyClock::time_point deadline) {
  requestStop();
  if (!thread_.joinable()) {
    finishStop();
    return true;
  }
  bool ended = true;
  {
    std::unique_lock lock(end_->mutex);
    ended = end_->ended.wait_until(lock, deadline, [this] { return end_->done; });
    if (!ended) {
      end_->leftBehind = true;
      thread_.detach();
      background::detachedStarted();
    }
  }
  if (ended) {
    thread_.join();
  } else {
    // A frame offered before the stop is through; any later one sees the stop (handOff).
    std::lock_guard barrier(offerMutex_);
    logger("capture")->warn(
        "[cam={}] the capture thread did not end after the stop ({}; a read that nothing "
        "interrupts, such as a file on a share that stopped answering): left to end on its own",
        config_.name, cameraStateName(state_.load()));
  }
  finishStop();
  return ended;
}

std::shared_ptr<Camera::ThreadEnd> Camera::threadLeftBehind() const {
  std::lock_guard lock(end_->mutex);
  return end_->leftBehind ? end_ : nullptr;
}

void Camera::finishStop() {
  sink_->detach();
  state_ = CameraState::kStopped;
  sink_->counters().up = false;
}

std::string Camera::lastError() const {
  std::lock_guard lock(mutex_);
  return lastError_;
}

bool Camera::sleepFor(std::chrono::milliseconds d) {
  sink_->counters().heartbeat.expectWithin(d + kHeartbeatGrace);
  std::unique_lock lock(mutex_);
  return !stopWake_.wait_for(lock, d, [this] { return stopping_.load(); });
}

void Camera::setState(CameraState state, const std::string& reason) {
  auto log = logger("capture");
  CameraState previous = state_.exchange(state);
  bool reasonChanged = false;
  {
    std::lock_guard lock(mutex_);
    // Served by /api/status: an error quoting the URL must not show its password.
    std::string shown = redactCredentials(reason);
    reasonChanged = lastError_ != shown;
    lastError_ = std::move(shown);
  }
  sink_->counters().up = state == CameraState::kStreaming;
  if (previous == state && !reasonChanged) return;
  switch (state) {
    case CameraState::kStreaming:
      log->info("[cam={}] streaming: {}", config_.name, reason);
      break;
    case CameraState::kReconnecting:
      log->warn("[cam={}] source lost, reconnecting with backoff: {}", config_.name, reason);
      break;
    case CameraState::kEnded:
      log->info("[cam={}] ended: {}", config_.name, reason);
      break;
    default:
      log->debug("[cam={}] {}: {}", config_.name, cameraStateName(state), reason);
  }
}

// The capture thread's state across the sessions of one run().
struct Camera::Supervision {
  std::chrono::milliseconds delay{0};  // before the next reopen
  bool everStreamed = false;
  Frame scratch;                  // receives frames that are dropped because the pool is empty
  std::uint64_t lostCounted = 0;  // of the source's framesLost(), already in the counters
  std::int64_t cpuCharged = 0;    // the thread's CPU clock when last added to the counters
  std::string hwFallbackLogged;   // why hardware decoding is not used, as last logged
  std::uint64_t badFrames = 0;    // corrupt frames in a row (reads failing with kInvalidData)
  std::string lastBadFrame;       // why the last of them was refused
  bool badRunWarned = false;      // this run of corrupt frames was logged as a warning
  SteadyClock::time_point lastBadWarning{};  // rate limit: a webcam may damage a frame a second
};

bool Camera::awaitPredecessor() {
  // As long as an open may take: a predecessor that never ends makes this camera overdue, as
  // if it were stuck itself (it is, on the same source).
  sink_->counters().heartbeat.expectWithin(kOpenLimit + kHeartbeatGrace);
  setState(CameraState::kStarting,
           "waiting for the previous capture thread to end (a read that nothing interrupts)");
  std::unique_lock lock(predecessor_->mutex);
  predecessor_->ended.wait(lock, [this] { return predecessor_->done || stopping_; });
  return !stopping_;
}

void Camera::run() {
  CapturedPicture::markCaptureThread();
  if (predecessor_ && !awaitPredecessor()) {
    sink_->counters().heartbeat.idle();
    return;
  }
  std::unique_ptr<FrameSource> source = factory_(config_);
  shareSource(source.get());
  CameraCounters& counters = sink_->counters();
  Supervision supervision;
  supervision.delay = backoff_.initial;
  supervision.cpuCharged = threadCpuNanos();
  while (!stopping_) {
    counters.heartbeat.expectWithin(kOpenLimit + kHeartbeatGrace);
    auto info = source->open();
    chargeCpu(supervision);
    if (!info) {
      // A stop (a reload, the daemon's end) interrupts an open under way: no failure to count
      // or warn about.
      if (stopping_) break;
      if (info.error().code == ErrorCode::kInvalidArgument ||
          info.error().code == ErrorCode::kUnsupported) {
        // A configuration problem will not fix itself quickly, but a device may be swapped:
        // keep retrying at the slowest rate.
        supervision.delay = backoff_.max;
      }
      counters.openFailures.fetch_add(1, std::memory_order_relaxed);
      setState(CameraState::kReconnecting, info.error().message);
      if (!backOff(supervision.delay)) break;
      continue;
    }
    if (supervision.everStreamed) counters.reconnects.fetch_add(1, std::memory_order_relaxed);
    const StreamEnd end = stream(*source, *info, supervision);
    source->close();
    if (stopping_) break;
    if (end.ended) {
      setState(CameraState::kEnded, end.reason);
      waitForStop();
      break;
    }
    setState(CameraState::kReconnecting, end.reason);
    if (!backOff(supervision.delay)) break;
  }
  source->close();
  shareSource(nullptr);
  chargeCpu(supervision);
  counters.heartbeat.idle();
}

void Camera::chargeCpu(Supervision& supervision) {
  const std::int64_t now = threadCpuNanos();
  sink_->counters().captureThreadCpuNanos.fetch_add(now - supervision.cpuCharged,
                                                       std::memory_order_relaxed);
  supervision.cpuCharged = now;
}

void Camera::shareSource(FrameSource* source) {
  std::lock_guard lock(mutex_);
  source_ = source;
  if (source != nullptr && stopping_) source->interrupt();
}

Camera::StreamEnd Camera::stream(FrameSource& source, const SourceInfo& info,
                                 Supervision& supervision) {
  CameraCounters& counters = sink_->counters();
  const auto framePeriod = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::duration<double>(5.0 / config_.fps));
  const auto stallTimeout = std::max(backoff_.stallTimeout, framePeriod);
  auto lastFrame = SteadyClock::now();
  bool announced = false;
  bool keyframesOnly = false;  // told to the source: the camera is idle under motion gating
  while (!stopping_) {
    counters.heartbeat.expectWithin(kReadTimeout + kHeartbeatGrace);
    // Every frame in use (the detector holds one, the slot another): this one is read into
    // scratch and dropped, its failures handled as any other read's.
    auto handle = pool_->acquire();
    Frame& target = handle ? **handle : supervision.scratch;
    auto ok = source.read(target, kReadTimeout);
    countLost(source, supervision);
    chargeCpu(supervision);
    if (ok) {
      target.id = nextFrameId();
      lastFrame = SteadyClock::now();
      counters.captured.fetch_add(1, std::memory_order_relaxed);
      if (supervision.badFrames > 0) reportGoodAgain(supervision);
      if (!announced) {
        announceStreaming(info, supervision);
        announced = true;
      }
      if (!handle) {
        counters.dropped.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      (*handle)->picture.billTo(counters.decoding);
      handOff(std::move(*handle), lastFrame);
      if (sink_->keyframesOnly() != keyframesOnly) {
        keyframesOnly = !keyframesOnly;
        source.setKeyframesOnly(keyframesOnly);
      }
      continue;
    }
    const Error& e = ok.error();
    if (e.code != ErrorCode::kTimeout && e.code != ErrorCode::kInvalidData) {
      return {e.message, e.code == ErrorCode::kEndOfStream};
    }
    if (e.code == ErrorCode::kTimeout && source.skippingToKeyframe()) {
      lastFrame = SteadyClock::now();  // the stream goes on, its pictures skipped: no stall
      continue;
    }
    if (e.code == ErrorCode::kInvalidData) reportBadFrame(e.message, supervision);
    // Nothing, or nothing usable, for too long: a camera sending only corrupt frames is as lost
    // as a silent one.
    if (SteadyClock::now() - lastFrame > stallTimeout) {
      if (supervision.badFrames == 0) {
        return {fmt::format("no frame for {} ms", stallTimeout.count()), false};
      }
      return {fmt::format("no usable frame for {} ms ({} corrupt, the last: {})",
                          stallTimeout.count(), supervision.badFrames, supervision.lastBadFrame),
              false};
    }
  }
  return {};
}

void Camera::reportBadFrame(const std::string& why, Supervision& supervision) {
  // A warning when a run of corrupt frames starts, at most once a minute (the count is in
  // vigil_camera_decode_errors_total); the runs in between at debug.
  constexpr std::chrono::seconds kBadWarningEvery{60};
  sink_->counters().decodeErrors.fetch_add(1, std::memory_order_relaxed);
  supervision.lastBadFrame = redactCredentials(why);
  if (supervision.badFrames++ > 0) return;
  const auto now = SteadyClock::now();
  supervision.badRunWarned = supervision.lastBadWarning == SteadyClock::time_point{} ||
                             now - supervision.lastBadWarning >= kBadWarningEvery;
  if (supervision.badRunWarned) supervision.lastBadWarning = now;
  logger("capture")->log(supervision.badRunWarned ? spdlog::level::warn : spdlog::level::debug,
                         "[cam={}] corrupt frames: {}", config_.name, supervision.lastBadFrame);
}

void Camera::reportGoodAgain(Supervision& supervision) {
  logger("capture")->log(supervision.badRunWarned ? spdlog::level::info : spdlog::level::debug,
                         "[cam={}] frames usable again after {} corrupt", config_.name,
                         supervision.badFrames);
  supervision.badFrames = 0;
  supervision.lastBadFrame.clear();
}

void Camera::countLost(const FrameSource& source, Supervision& supervision) {
  const std::uint64_t lost = source.framesLost();
  if (lost > supervision.lostCounted) {
    sink_->counters().lost.fetch_add(lost - supervision.lostCounted, std::memory_order_relaxed);
  }
  supervision.lostCounted = lost;
}

void Camera::announceStreaming(const SourceInfo& info, Supervision& supervision) {
  std::string decoder = info.decoder;
  if (!info.hwFallback.empty()) {
    decoder +=
        fmt::format(" (hwaccel {}: {})", hwAccelName(config_.hwDecode.accel), info.hwFallback);
    if (info.hwFallback != supervision.hwFallbackLogged) {
      logger("capture")->warn("[cam={}] hwaccel {} not used: {}; decoding in software",
                              config_.name, hwAccelName(config_.hwDecode.accel), info.hwFallback);
      supervision.hwFallbackLogged = info.hwFallback;
    }
  }
  sink_->counters().setDecoder(std::move(decoder));
  setState(CameraState::kStreaming,
           fmt::format("{}x{} {} at {:.1f} fps ({})", info.width, info.height, info.pixelFormat,
                       info.fps, info.description));
  supervision.everStreamed = true;
  supervision.delay = backoff_.initial;
}

void Camera::handOff(FrameHandle frame, SteadyClock::time_point captured) {
  if (sampler_) sampler_->offer(frame->picture, captured);
  if (!sink_->admit(frame->picture, captured)) return;
  std::lock_guard lock(offerMutex_);
  if (stopping_) return;  // a stop may have left this thread behind, and the scheduler gone
  sink_->offer(std::move(frame));
}

bool Camera::backOff(std::chrono::milliseconds& delay) {
  if (!sleepFor(delay)) return false;
  delay = std::min(delay * 2, backoff_.max);
  return true;
}

void Camera::waitForStop() {
  sink_->counters().heartbeat.idle();
  std::unique_lock lock(mutex_);
  stopWake_.wait(lock, [this] { return stopping_.load(); });
}

}  // namespace vigil
