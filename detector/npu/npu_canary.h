#pragma once

#include <span>
#include <vector>

#include "detector/cpu_stage.h"
#include "detector/model_manifest.h"
#include "detector/tensor.h"
#include "foundation/error.h"

namespace vigil {

// The canary of an NPU stage: a known input whose right outputs are known, run on the NPU before
// its outputs are trusted (at start, periodically, on a context or device the recovery ladder
// made). Two kinds, as the bundle says:
//  - files (canary_input, canary_expected): the inputs and the expected outputs in device
//    format; the NPU's outputs must be within canary_tolerance of the expected ones, and of the
//    CPU reference's on the same inputs (half a quantization step more for an integer output);
//  - a photograph (canary_image, bundles whose NPU stage compiles its own ONNX file: vitisai),
//    letterboxed into the input; the NPU's outputs must be within canary_tolerance of the CPU
//    reference's.
// NpuStage::canary runs the NPU between prepare() and judge(). Threads: the inference worker.

// One canary run's inputs and what its outputs are held to.
struct CanaryTrial {
  std::vector<Tensor> inputs;
  std::vector<Tensor> expected;   // the bundle's expected outputs; empty for a photograph
  std::vector<Tensor> reference;  // the CPU reference's outputs on `inputs`
};

class NpuCanary {
 public:
  // `stage`: the manifest's NPU stage; `reference`: its CPU reference. All three outlive the
  // canary.
  NpuCanary(const ModelManifest& manifest, const StageSpec& stage, CpuStage& reference);

  // Whether the canary is a photograph rather than files.
  bool fromImage() const { return !spec_.canaryImage.empty(); }

  // The inputs (the files unpacked, or the photograph letterboxed) and the outputs the NPU is
  // held to, the CPU reference's computed now. Errors: files without an expected output, a file
  // or photograph that cannot be read, a file too short for its tensors, the reference's own.
  Expected<CanaryTrial> prepare() const;

  // The NPU's outputs on trial.inputs against the trial: kInvalidOutput naming the first output
  // out of tolerance ("the NPU returns wrong results").
  Expected<void> judge(const CanaryTrial& trial, std::span<const Tensor> npuOutputs) const;

 private:
  Expected<CanaryTrial> prepareFiles() const;
  Expected<CanaryTrial> prepareImage() const;
  Expected<void> judgeAgainstFiles(const CanaryTrial& trial,
                                   std::span<const Tensor> npuOutputs) const;
  Expected<void> judgeAgainstReference(const CanaryTrial& trial,
                                       std::span<const Tensor> npuOutputs) const;
  // The CPU reference's outputs on `inputs`.
  Expected<std::vector<Tensor>> referenceOn(const std::vector<Tensor>& inputs) const;

  const ModelManifest& manifest_;
  const StageSpec& stage_;
  const NpuStageSpec& spec_;
  CpuStage& reference_;
};

}  // namespace vigil
