#include "daemon/pipeline/inference_worker.h"

#include "daemon/log.h"

namespace vigil {

InferenceWorker::InferenceWorker(std::unique_ptr<Detector> detector, Scheduler& scheduler,
                                 ResultHandler onResult)
    : detector_(std::move(detector)),
      scheduler_(scheduler),
      onResult_(std::move(onResult)),
      input_(detector_->manifest().input.width, detector_->manifest().input.height) {}

InferenceWorker::~InferenceWorker() { stop(); }

void InferenceWorker::start() {
  if (thread_.joinable()) return;
  stopping_ = false;
  scheduler_.restart();
  thread_ = std::thread([this] {
    run();
    heartbeat_.idle();
  });
}

void InferenceWorker::stop() {
  stopping_ = true;
  scheduler_.stop();
  if (thread_.joinable()) thread_.join();
}

void InferenceWorker::run() {
  auto log = logger("detector");
  DetectionResult result;
  auto lastErrorLog = SteadyClock::time_point{};
  std::uint64_t suppressed = 0;
  const std::string backend(detector_->backend().name());
  constexpr auto kWait = std::chrono::milliseconds(500);
  while (!stopping_) {
    heartbeat_.expectWithin(kWait + std::chrono::seconds(10));
    auto job = scheduler_.next(kWait);
    if (!job) continue;
    heartbeat_.expectWithin(kInferenceLimit);
    const Frame& frame = *job->frame;
    auto start = SteadyClock::now();
    // The picture becomes pixels here, when the camera is due, at the size the letterbox needs.
    const cv::Size full = frame.picture.size();
    auto pixels = frame.picture.bgr(scaledDecode_.load(std::memory_order_relaxed)
                                        ? letterboxCovering(full, input_)
                                        : cv::Size());
    if (!pixels) {
      // A picture that does not decode is a corrupt frame of its camera, never a detection.
      busyNanos_.fetch_add(std::chrono::nanoseconds(SteadyClock::now() - start).count(),
                           std::memory_order_relaxed);
      job->camera->counters().decodeErrors.fetch_add(1, std::memory_order_relaxed);
      log->debug("[cam={}] frame skipped: {}", job->camera->name(), pixels.error().message);
      continue;
    }
    auto ok = detector_->detect(*pixels, full, result);
    busyNanos_.fetch_add(
        std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now() - start).count(),
        std::memory_order_relaxed);
    if (!ok) {
      failures_.fetch_add(1, std::memory_order_relaxed);
      if (ok.error().code == ErrorCode::kInvalidOutput) {
        invalidOutputs_.fetch_add(1, std::memory_order_relaxed);
      }
      // One line per 10 s at most: a broken backend must not flood the journal.
      if (start - lastErrorLog > std::chrono::seconds(10)) {
        log->error("[cam={}] detection failed: {}{}", job->camera->name(), ok.error().message,
                   suppressed > 0 ? fmt::format(" ({} more since the last report)", suppressed)
                                  : std::string());
        lastErrorLog = start;
        suppressed = 0;
      } else {
        ++suppressed;
      }
      continue;
    }
    job->camera->counters().detected.fetch_add(1, std::memory_order_relaxed);
    inferences_.fetch_add(1, std::memory_order_relaxed);
    FrameResult out;
    out.camera = job->camera->name();
    out.sequence = frame.sequence;
    out.frameId = frame.id;
    out.width = result.width;
    out.height = result.height;
    out.captureTime = frame.captureTime;
    out.startTime = start;
    out.doneTime = SteadyClock::now();
    out.detections = result.detections;
    out.timings = result.timings;
    out.backend = backend;
    out.frame = std::move(job->frame);
    onResult_(std::move(out));
  }
}

}  // namespace vigil
