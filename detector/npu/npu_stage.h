#pragma once

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "detector/cpu_stage.h"
#include "detector/npu/npu_runtime.h"
#include "detector/npu/npu_stats.h"
#include "detector/tensor.h"

namespace spdlog {
class logger;
}

namespace vigil {

// The NPU stage of the NPU backend (npu_backend.h): one runtime, the device-format packing, the
// recovery ladder, the NaN/Inf scan and the canary's runs (what a canary is and what it is held
// to: npu_canary.h). Threads: the inference worker only.

// The "npu" logger (the default one until the daemon has made it).
std::shared_ptr<spdlog::logger> npuLog();
// A zero tensor of the spec's name and shape.
Tensor zeroTensor(const TensorSpec& spec);
// A whole file, or kNotFound naming it.
Expected<std::vector<std::byte>> readBytes(const std::filesystem::path& path);

// A failure of the NPU stage, with the fallback reason `auto` reports for it.
struct StageFailure {
  Error error;
  FallbackReason reason;
};

// Runs the NPU stage: owns the runtime, packs and unpacks, climbs the recovery ladder, checks
// outputs and runs the canary (NpuCanary).
class NpuStage {
 public:
  NpuStage(std::shared_ptr<const ModelManifest> manifest, const StageSpec& stage,
           std::unique_ptr<NpuRuntime> runtime, std::unique_ptr<CpuStage> reference,
           bool compareWithReference);

  std::string describe() const { return runtime_->describe(); }
  std::span<Tensor> outputs() { return outputs_; }

  Expected<void> bringUp();

  // What execute() and canary() do when a run fails: climb the recovery ladder, or, for the
  // canary that vets a context the ladder made, fail at once with kRunFailed.
  enum class OnRunFailure { kClimbLadder, kFail };

  // inputs: the stage's ONNX inputs (NCHW float). Results in outputs().
  tl::expected<void, StageFailure> execute(std::span<const Tensor> inputs,
                                           OnRunFailure onRunFailure = OnRunFailure::kClimbLadder);

  // Runs the canary (the bundle's files, or its photograph) and holds the outputs to the
  // bundle's expected output and the CPU reference, as NpuCanary says.
  tl::expected<void, StageFailure> canary(OnRunFailure onRunFailure = OnRunFailure::kClimbLadder);

 private:
  // True when a canary's failed run says nothing of its numbers (see the definition).
  static bool noVerdict(const StageFailure& f, OnRunFailure onRunFailure);

  const NpuArgument* argumentOf(const std::string& tensor, NpuArgRole role) const;

  Expected<void> loadAndAllocate();

  // The ladder: each rung undoes one more level and runs the same frame again. A timeout skips
  // the retry: the driver's reset of a hung run destroyed the context it ran on. A new context
  // or device runs the canary before its outputs are trusted; wrong numbers end the climb.
  tl::expected<void, StageFailure> climbLadder(std::span<const Tensor> inputs, Error error);

  // Drops the hardware context, and with `reopenDevice` the device, makes them again and runs
  // the canary on them: kCanaryFailed when it computes wrong numbers, kRunFailed when any step
  // (the canary's run included) fails.
  tl::expected<void, StageFailure> rebuildAndVet(bool reopenDevice);

  Expected<void> packInputs(std::span<const Tensor> inputs);

  Expected<void> attempt();

  std::shared_ptr<const ModelManifest> owner_;  // a copy: the caller's may move
  const ModelManifest& manifest_;
  const StageSpec& stage_;
  const NpuStageSpec& spec_;
  std::unique_ptr<NpuRuntime> runtime_;
  std::unique_ptr<CpuStage> reference_;
  bool compareWithReference_;
  std::vector<Tensor> outputs_;
  std::vector<Tensor> referenceOutputs_;  // only with compareWithReference_
};

}  // namespace vigil
