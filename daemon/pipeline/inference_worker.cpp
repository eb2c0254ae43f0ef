#include "daemon/pipeline/inference_worker.h"

#include <numeric>

#include "daemon/base/log.h"
#include "daemon/base/thread_name.h"

namespace vigil {

namespace {

// What the detector made of the job's frame, for the result handler; the frame goes with it.
FrameResult frameResultOf(DetectionJob& job, const DetectionResult& result,
                          SteadyClock::time_point start, const std::string& backend) {
  FrameResult out;
  out.camera = job.camera->name();
  out.sequence = job.frame->sequence;
  out.frameId = job.frame->id;
  out.width = result.width;
  out.height = result.height;
  out.captureTime = job.frame->captureTime;
  out.startTime = start;
  out.doneTime = SteadyClock::now();
  out.detections = result.detections;
  out.timings = result.timings;
  out.backend = backend;
  out.frame = std::move(job.frame);
  return out;
}

}  // namespace

InferenceWorker::InferenceWorker(std::unique_ptr<Detector> detector, Scheduler& scheduler,
                                 ResultHandler onResult)
    : scheduler_(scheduler), onResult_(std::move(onResult)) {
  adopt(std::move(detector));
}

InferenceWorker::~InferenceWorker() { stop(); }

void InferenceWorker::start() {
  if (thread_.joinable()) return;
  stopping_ = false;
  scheduler_.restart();
  thread_ = std::thread([this] {
    run();
    heartbeat_.idle();
  });
  nameThread(thread_, "inference");
}

void InferenceWorker::stop() {
  stopping_ = true;
  scheduler_.stop();
  {
    // The inference in flight is cut where the backend can (between two of the graph's nodes),
    // not waited for: seconds of it on a slow CPU. The detector is done with after this.
    std::lock_guard lock(detectorSwap_);
    if (detector_ && thread_.joinable()) detector_->interrupt();
  }
  given_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::unique_ptr<Detector> InferenceWorker::take() {
  takeWanted_ = true;
  std::lock_guard lock(mutex_);
  takeWanted_ = false;
  std::lock_guard swap(detectorSwap_);
  return std::move(detector_);
}

void InferenceWorker::give(std::unique_ptr<Detector> detector) {
  {
    std::lock_guard lock(mutex_);
    adopt(std::move(detector));
  }
  given_.notify_all();
}

std::unique_ptr<Detector> InferenceWorker::replace(std::unique_ptr<Detector> next) {
  takeWanted_ = true;
  std::unique_ptr<Detector> old;
  {
    std::lock_guard lock(mutex_);
    takeWanted_ = false;
    {
      std::lock_guard swap(detectorSwap_);
      old = std::move(detector_);
    }
    adopt(std::move(next));
  }
  given_.notify_all();
  return old;
}

void InferenceWorker::adopt(std::unique_ptr<Detector> detector) {
  {
    std::lock_guard swap(detectorSwap_);
    detector_ = std::move(detector);
  }
  if (!detector_) return;
  const ModelManifest& m = detector_->manifest();
  input_ = cv::Size(m.input.width, m.input.height);
  backend_ = std::string(detector_->backend().name());
  std::lock_guard lock(infoMutex_);
  modelName_ = m.name;
  classNames_ = m.postprocess.classNames;
}

std::string InferenceWorker::modelName() const {
  std::lock_guard lock(infoMutex_);
  return modelName_;
}

std::vector<std::string> InferenceWorker::classNames() const {
  std::lock_guard lock(infoMutex_);
  return classNames_;
}

void InferenceWorker::run() {
  constexpr auto kWait = std::chrono::milliseconds(500);
  while (!stopping_) {
    heartbeat_.expectWithin(kWait + std::chrono::seconds(10));
    std::unique_lock lock(mutex_);
    if (!detector_ || takeWanted_) {
      // Between take() and give(): alive, the frames wait in their slots.
      given_.wait_for(lock, kWait);
      continue;
    }
    lock.unlock();
    auto job = scheduler_.next(kWait);
    if (!job) continue;
    lock.lock();
    if (!detector_) continue;  // taken meanwhile: the frame goes back to its pool
    heartbeat_.expectWithin(kInferenceLimit);
    detect(*job);
  }
}

Expected<void> InferenceWorker::detectPicture(DetectionJob& job, bool& refused) {
  const Frame& frame = *job.frame;
  // The picture becomes pixels here, when the camera is due, at the size the detection needs:
  // the whole picture just covering the letterbox; on regions, each region's own pixels.
  const cv::Size full = frame.picture.size();
  const bool scaled = scaledDecode_.load(std::memory_order_relaxed);
  // A picture that does not decode, or decodes damaged, is a corrupt frame of its camera, never
  // a detection (the picture counted it, once, in its camera's DecodeAccount).
  auto decoded = [&](Expected<cv::Mat> pixels) {
    if (!pixels) {
      log_->debug("[cam={}] frame skipped: {}", job.camera->name(), pixels.error().message);
      refused = true;
    }
    return pixels;
  };
  detector_->setDenoise(job.camera->denoise());
  CameraRegions& regions = job.camera->regions();
  if (!regions.decide(full, input_)) {
    auto pixels = decoded(frame.picture.bgr(scaled ? letterboxCovering(full, input_) : cv::Size()));
    if (!pixels) return tl::unexpected(pixels.error());
    auto ok = detector_->detect(*pixels, full, result_);
    RegionCounts whole{};
    whole[static_cast<std::size_t>(RegionKind::kWhole)] = 1;
    charge(job, whole);
    return ok;
  }
  const auto plan = regions.plan(
      full, std::chrono::duration<double>(frame.captureTime.time_since_epoch()).count());
  // The whole picture as without regions; a region decoded alone (a JPEG's rows and columns,
  // an FFmpeg picture's region converted), at full resolution.
  auto pixels = [&](const cv::Rect& rect, cv::Size atLeast) {
    return decoded(rect.size() == full ? frame.picture.bgr(scaled ? atLeast : cv::Size())
                                       : frame.picture.bgrRegion(rect));
  };
  RegionCounts ran{};
  auto ok = regions_.detect(*detector_, full, pixels, plan, result_, ran);
  charge(job, ran);
  return ok;
}

void InferenceWorker::charge(DetectionJob& job, const RegionCounts& ran) {
  job.camera->regions().counted(ran);
  scheduler_.charge(*job.camera, std::accumulate(ran.begin(), ran.end(), std::uint64_t{0}));
}

void InferenceWorker::detect(DetectionJob& job) {
  auto start = SteadyClock::now();
  bool refused = false;
  auto ok = detectPicture(job, refused);
  counters_.busy(SteadyClock::now() - start);
  if (refused) return;
  if (!ok) {
    if (stopping_) return;  // cut by the stop (interrupt): no failure of the detector
    counters_.failed(ok.error(), job.camera->name(), start);
    return;
  }
  job.camera->counters().detected.fetch_add(1, std::memory_order_relaxed);
  counters_.succeeded();
  onResult_(frameResultOf(job, result_, start, backend_));
}

}  // namespace vigil
