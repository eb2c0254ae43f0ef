#pragma once

#include <filesystem>
#include <memory>
#include <span>

#include "detector/backend.h"
#include "detector/cpu_stage.h"

namespace vigil {

// The reference backend: OpenCV DNN (DNN_BACKEND_OPENCV, DNN_TARGET_CPU) running every stage of
// the manifest in order, a stage's outputs feeding the next stage's inputs by name.
// OpenCV's thread count is process-wide (cv::setNumThreads); options.threads sets it.
Expected<std::unique_ptr<InferenceBackend>> createOpenCvBackend(const ModelManifest& manifest,
                                                                const BackendOptions& options);

// One ONNX stage on the reference runtime (see CpuStage).
class OnnxStage final : public CpuStage {
 public:
  static Expected<std::unique_ptr<OnnxStage>> load(const std::filesystem::path& file,
                                                   const StageSpec& spec);
  ~OnnxStage() override;
  OnnxStage(const OnnxStage&) = delete;
  OnnxStage& operator=(const OnnxStage&) = delete;

  Expected<void> run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override;
  const StageSpec& spec() const override { return spec_; }

 private:
  struct Impl;
  OnnxStage(StageSpec spec, std::unique_ptr<Impl> impl);
  StageSpec spec_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vigil
