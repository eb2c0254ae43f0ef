#include "detector/detector.h"

#include <algorithm>
#include <chrono>
#include <opencv2/core/utility.hpp>

#include "detector/verify.h"

namespace vigil {

namespace {

using Clock = std::chrono::steady_clock;

double millisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace

Expected<std::unique_ptr<Detector>> Detector::create(const DetectorOptions& options) {
  auto manifest = loadModelManifest(options.model);
  if (!manifest) return tl::unexpected(manifest.error());

  std::vector<ModelVerification> verification;
  for (const ModelFile& file : manifest->files) {
    auto check = verifyModelFile(*manifest, file, options.allowUnverifiedModel);
    if (!check) return tl::unexpected(check.error());
    verification.push_back({check->path.string(), check->sha256, check->variant != nullptr,
                            check->variant ? check->variant->origin : std::string()});
  }

  const PostprocessSpec& post = manifest->postprocess;
  std::vector<bool> wanted(post.classNames.size(), false);
  const std::vector<std::string>& names =
      options.classes.empty() ? post.defaultClasses : options.classes;
  for (const std::string& name : names) {
    int index = post.classIndex(name);
    if (index < 0) {
      return makeError(ErrorCode::kInvalidArgument, "unknown class '{}' for model {} ({} classes)",
                       name, manifest->name, post.classNames.size());
    }
    wanted[static_cast<std::size_t>(index)] = true;
  }
  if (options.minScore && !(*options.minScore >= 0 && *options.minScore <= 1)) {
    return makeError(ErrorCode::kInvalidArgument, "min score must be in [0, 1], got {}",
                     *options.minScore);
  }
  if (options.nmsIou && !(*options.nmsIou >= 0 && *options.nmsIou <= 1)) {
    return makeError(ErrorCode::kInvalidArgument, "NMS IoU must be in [0, 1], got {}",
                     *options.nmsIou);
  }
  if (options.maxDetections < 1) {
    return makeError(ErrorCode::kInvalidArgument, "max detections must be at least 1");
  }

  BackendOptions backendOptions;
  backendOptions.threads = options.threads;
  backendOptions.compareWithReference = options.compareWithReference;
  backendOptions.fuseStem = options.fuseStem;
  backendOptions.vitisai = options.vitisai;
  std::string autoFallback;
  auto backend = createBackend(options.backend, *manifest, backendOptions, &autoFallback);
  if (!backend) return tl::unexpected(backend.error());

  std::unique_ptr<Detector> detector(
      new Detector(std::move(*manifest), std::move(*backend), options, std::move(wanted)));
  detector->verification_ = std::move(verification);
  detector->autoFallback_ = std::move(autoFallback);
  return detector;
}

Detector::Detector(ModelManifest manifest, std::unique_ptr<InferenceBackend> backend,
                   const DetectorOptions& options, std::vector<bool> wantedClasses)
    : manifest_(std::move(manifest)),
      backend_(std::move(backend)),
      letterbox_(manifest_.input, options.denoise),
      decoder_(manifest_.input, manifest_.postprocess),
      wantedClasses_(std::move(wantedClasses)),
      minScore_(options.minScore.value_or(manifest_.postprocess.defaultMinScore)),
      nmsIou_(options.nmsIou.value_or(manifest_.postprocess.defaultNmsIou)),
      maxDetections_(options.maxDetections) {
  candidates_.reserve(static_cast<std::size_t>(decoder_.anchorCount()));
  const int stride = manifest_.postprocess.largestStride();
  if (options.fitInput && manifest_.input.anySize && backend_->takesAnySize() && stride > 0) {
    fitInput(stride);
  }
}

// A model whose manifest says any_size but whose graph does not run at another size (a Reshape
// to fixed sizes) would fail every frame: one run at the smallest fitted size (one stride
// square, a few microseconds) says so first, and the detector keeps the declared size.
void Detector::fitInput(int multiple) {
  Tensor probe;
  probe.resize({1, 3, multiple, multiple});
  std::fill(probe.data.begin(), probe.data.end(), static_cast<float>(manifest_.input.padValue));
  Tensor out;
  const std::size_t expected = static_cast<std::size_t>(decoder_.anchorCount(multiple, multiple)) *
                               static_cast<std::size_t>(decoder_.channelCount());
  if (auto ok = backend_->infer(probe, out); !ok) {
    fitRefused_ = ok.error().message;
  } else if (out.data.size() != expected) {
    fitRefused_ = fmt::format("a {}x{} input gave {} output values, not {}", multiple, multiple,
                              out.data.size(), expected);
  } else {
    letterbox_.setFit(multiple);
    inputFitted_ = true;
  }
}

std::string Detector::inputDescription() const {
  const InputSpec& input = manifest_.input;
  return fmt::format("{}{}x{}", inputFitted_ ? "fitted to each picture, up to " : "", input.width,
                     input.height);
}

const std::string& Detector::className(int classId) const {
  static const std::string unknown = "unknown";
  const auto& names = manifest_.postprocess.classNames;
  if (classId < 0 || static_cast<std::size_t>(classId) >= names.size()) return unknown;
  return names[static_cast<std::size_t>(classId)];
}

Expected<void> Detector::detect(const cv::Mat& bgr, DetectionResult& result) {
  result.detections.clear();
  result.width = bgr.cols;
  result.height = bgr.rows;
  if (bgr.empty() || bgr.type() != CV_8UC3) {
    return makeError(ErrorCode::kInvalidArgument, "expected a non-empty 8-bit BGR image");
  }

  auto t0 = Clock::now();
  LetterboxInfo letterbox;
  try {
    letterbox = letterbox_.run(bgr, input_);
  } catch (const cv::Exception& e) {
    return makeError(ErrorCode::kInvalidArgument, "preprocess: {}", e.what());
  }
  result.timings.preprocessMs = millisecondsSince(t0);

  auto t1 = Clock::now();
  if (auto ok = backend_->infer(input_, output_); !ok) return ok;
  result.timings.inferenceMs = millisecondsSince(t1);

  auto t2 = Clock::now();
  if (auto ok = checkFinite(output_.values(), backend_->device()); !ok) return ok;
  const int anchors =
      decoder_.anchorCount(static_cast<int>(input_.shape[3]), static_cast<int>(input_.shape[2]));
  if (output_.data.size() !=
      static_cast<std::size_t>(anchors) * static_cast<std::size_t>(decoder_.channelCount())) {
    return makeError(ErrorCode::kInvalidOutput, "output has {} values, expected {} x {}",
                     output_.data.size(), anchors, decoder_.channelCount());
  }
  decoder_.decode(output_, letterbox, minScore_, wantedClasses_, candidates_);
  nonMaximumSuppression(candidates_, nmsIou_, maxDetections_, order_, result.detections);
  clipBoxes(result.detections, bgr.cols, bgr.rows);
  result.timings.postprocessMs = millisecondsSince(t2);
  return {};
}

Expected<void> Detector::detect(const cv::Mat& bgr, cv::Size sourceSize, DetectionResult& result) {
  if (auto ok = detect(bgr, result); !ok) return ok;
  if (sourceSize.empty() || sourceSize == bgr.size()) return {};
  const float sx = static_cast<float>(sourceSize.width) / static_cast<float>(bgr.cols);
  const float sy = static_cast<float>(sourceSize.height) / static_cast<float>(bgr.rows);
  for (Detection& d : result.detections) {
    d.box.x *= sx;
    d.box.width *= sx;
    d.box.y *= sy;
    d.box.height *= sy;
  }
  result.width = sourceSize.width;
  result.height = sourceSize.height;
  return {};
}

}  // namespace vigil
