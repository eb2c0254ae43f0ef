#pragma once

#include <filesystem>
#include <memory>
#include <span>

#include "detector/backend.h"

namespace vigil {

// The reference backend: OpenCV DNN (DNN_BACKEND_OPENCV, DNN_TARGET_CPU) running every stage of
// the manifest in order, a stage's outputs feeding the next stage's inputs by name.
// OpenCV's thread count is process-wide (cv::setNumThreads); options.threads sets it.
Expected<std::unique_ptr<InferenceBackend>> createOpenCvBackend(const ModelManifest& manifest,
                                                                const BackendOptions& options);

// One ONNX stage on the reference runtime, with any number of inputs and outputs: the CPU part
// of a split model behind an NPU stage, and the CPU reference the NPU's canary is compared with.
// Threads: one caller at a time. Failure: run() never throws.
class OnnxStage {
 public:
  static Expected<std::unique_ptr<OnnxStage>> load(const std::filesystem::path& file,
                                                   const StageSpec& spec);
  ~OnnxStage();
  OnnxStage(const OnnxStage&) = delete;
  OnnxStage& operator=(const OnnxStage&) = delete;

  // `inputs` in the order of spec.inputs; `outputs` (one per spec.outputs, resized on first use)
  // receive the results in that order.
  Expected<void> run(std::span<const Tensor> inputs, std::span<Tensor> outputs);
  const StageSpec& spec() const { return spec_; }

 private:
  struct Impl;
  OnnxStage(StageSpec spec, std::unique_ptr<Impl> impl);
  StageSpec spec_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vigil
