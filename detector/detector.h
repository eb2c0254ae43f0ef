#pragma once

#include <filesystem>
#include <memory>
#include <opencv2/core.hpp>
#include <optional>
#include <string>
#include <vector>

#include "detector/backend.h"
#include "detector/box.h"
#include "detector/model_manifest.h"
#include "detector/nms.h"
#include "detector/preprocess.h"
#include "detector/tensor.h"
#include "detector/yolox_decode.h"
#include "foundation/error.h"

namespace vigil {

struct DetectorOptions {
  std::filesystem::path model;  // a model directory or its model.yaml
  std::string backend = "cpu";
  int threads = 0;                   // 0: the backend's default
  std::optional<float> minScore;     // default: the manifest's
  std::optional<float> nmsIou;       // default: the manifest's
  std::vector<std::string> classes;  // class names; empty: the manifest's default classes
  int maxDetections = 100;
  bool allowUnverifiedModel = false;  // run weights whose sha256 the manifest does not list
  bool compareWithReference = false;  // see BackendOptions (vigil bench)
  bool denoise = false;               // a 3x3 median in the letterbox (preprocess.h)
  // With a model whose input.any_size is set and a backend that takes it (cpu-ort): pictures
  // padded only to the model's largest stride, not to its square (Letterbox's fitted input).
  // false: every input at the manifest's size (--square-input, to compare).
  bool fitInput = true;
  bool fuseStem = true;     // see BackendOptions; false: --file-graph, to compare
  VitisAiSettings vitisai;  // see BackendOptions
};

struct StageTimings {
  double preprocessMs = 0;
  double inferenceMs = 0;
  double postprocessMs = 0;  // finite check, decode, NMS, clipping
};

struct DetectionResult {
  int width = 0;
  int height = 0;
  std::vector<Detection> detections;  // source pixels, clipped, descending score
  StageTimings timings;
};

struct ModelVerification {
  std::string file;
  std::string sha256;
  bool listed = false;  // false only with allowUnverifiedModel
  std::string origin;
};

// The facade the daemon and the commands use: image in, detections out.
// Ownership and threads: owns its backend and every buffer; one thread calls detect() at a time.
// Failure: create() fails on a bad manifest, missing or unverified weights, an unknown backend
// or class; detect() returns kInvalidOutput when the backend's output is not finite and
// kBackendFailure when the runtime fails, and never throws.
class Detector {
 public:
  static Expected<std::unique_ptr<Detector>> create(const DetectorOptions& options);

  // `result` is reused: its vectors keep their capacity between frames.
  Expected<void> detect(const cv::Mat& bgr, DetectionResult& result);
  // The letterbox's 3x3 median (DetectorOptions::denoise) for the next detect() calls.
  void setDenoise(bool on) { letterbox_.setDenoise(on); }
  // The same for a picture decoded smaller than it arrived, `sourceSize` (the daemon decodes a
  // 1080p JPEG at 1/4 scale for the 416x416 input): boxes, width and height are reported in
  // `sourceSize`'s pixels.
  Expected<void> detect(const cv::Mat& bgr, cv::Size sourceSize, DetectionResult& result);

  // The end of this detector's use, from any thread: the backend's inference in flight is cut
  // where the runtime can (InferenceBackend::interrupt), and every later detect() fails.
  void interrupt() { backend_->interrupt(); }

  const ModelManifest& manifest() const { return manifest_; }
  const InferenceBackend& backend() const { return *backend_; }
  const std::vector<ModelVerification>& verification() const { return verification_; }
  // With backend "auto": why backends preferred to the one in use did not load (empty if none).
  const std::string& autoFallback() const { return autoFallback_; }
  const std::string& className(int classId) const;
  // Whether inputs are fitted to each picture (DetectorOptions::fitInput, when the model and
  // the backend allow it).
  bool inputFitted() const { return inputFitted_; }
  // For logs: "416x416", or "fitted to each picture, up to 416x416".
  std::string inputDescription() const;
  // Why an input that could be fitted is not (the model did not run at a smaller size, for the
  // caller to warn of); empty otherwise.
  const std::string& fitRefused() const { return fitRefused_; }
  float minScore() const { return minScore_; }
  float nmsIou() const { return nmsIou_; }
  int maxDetections() const { return maxDetections_; }

 private:
  Detector(ModelManifest manifest, std::unique_ptr<InferenceBackend> backend,
           const DetectorOptions& options, std::vector<bool> wantedClasses);

  ModelManifest manifest_;
  std::unique_ptr<InferenceBackend> backend_;
  std::vector<ModelVerification> verification_;
  std::string autoFallback_;
  Letterbox letterbox_;
  YoloxDecoder decoder_;
  std::vector<bool> wantedClasses_;
  float minScore_;
  float nmsIou_;
  int maxDetections_;
  void fitInput(int multiple);

  bool inputFitted_ = false;
  std::string fitRefused_;
  Tensor input_;
  Tensor output_;
  std::vector<Detection> candidates_;
  std::vector<int> order_;
};

}  // namespace vigil
