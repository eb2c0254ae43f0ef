#pragma once

#include <memory>
#include <span>

#include "detector/model_manifest.h"
#include "detector/tensor.h"
#include "foundation/error.h"

namespace vigil {

// One ONNX stage run on the CPU, with any number of inputs and outputs: the CPU part of a split
// model behind an NPU stage, and the CPU reference the NPU's canary is compared with.
// Threads: one caller at a time. Failure: run() never throws.
class CpuStage {
 public:
  virtual ~CpuStage() = default;
  // `inputs` in the order of spec().inputs; `outputs` (one per spec().outputs, resized on first
  // use) receive the results in that order.
  virtual Expected<void> run(std::span<const Tensor> inputs, std::span<Tensor> outputs) = 0;
  virtual const StageSpec& spec() const = 0;
};

// `stage` of `manifest` on the CPU: OpenCV DNN (the reference), or ONNX Runtime's CPU EP when
// the model is integer (QDQ), which OpenCV DNN 4.6 cannot load; kUnsupported for an integer
// model in a build without ONNX Runtime.
Expected<std::unique_ptr<CpuStage>> loadCpuStage(const ModelManifest& manifest,
                                                 const StageSpec& stage);

}  // namespace vigil
