#include "detector/npu/npu_stage.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstring>
#include <fstream>

#include "detector/npu/device_tensor.h"
#include "detector/npu/npu_canary.h"
#include "detector/npu/npu_environment.h"
#include "detector/verify.h"

namespace vigil {

std::shared_ptr<spdlog::logger> npuLog() {
  auto l = spdlog::get("npu");
  return l ? l : spdlog::default_logger();
}

Tensor zeroTensor(const TensorSpec& spec) {
  Tensor t;
  t.name = spec.name;
  t.resize(spec.shape);
  return t;
}

Expected<std::vector<std::byte>> readBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return makeError(ErrorCode::kNotFound, "{}: cannot open", path.string());
  std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::vector<std::byte> out(bytes.size());
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

NpuStage::NpuStage(std::shared_ptr<const ModelManifest> manifest, const StageSpec& stage,
                   std::unique_ptr<NpuRuntime> runtime, std::unique_ptr<CpuStage> reference,
                   bool compareWithReference)
    : owner_(std::move(manifest)),
      manifest_(*owner_),
      stage_(stage),
      spec_(*stage.npu),
      runtime_(std::move(runtime)),
      reference_(std::move(reference)),
      compareWithReference_(compareWithReference) {
  for (const TensorSpec& t : stage_.outputs) outputs_.push_back(zeroTensor(t));
  if (compareWithReference_) {
    for (const TensorSpec& t : stage_.outputs) referenceOutputs_.push_back(zeroTensor(t));
  }
}

namespace {

// A failed device open, with the environment's specific cause (device node, permission,
// memlock, xrt.ini) added.
Expected<void> explainNpuOpenFailure(const Error& e, const std::string& runtime) {
  auto problems = npuEnvironmentProblems(probeNpuEnvironment());
  std::string causes;
  for (const std::string& p : problems) causes += "; " + p;
  return makeError(ErrorCode::kUnavailable, "cannot open the NPU ({}): {}{}", runtime, e.message,
                   causes);
}

}  // namespace

Expected<void> NpuStage::bringUp() {
  if (auto ok = runtime_->openDevice(); !ok)
    return explainNpuOpenFailure(ok.error(), runtime_->describe());
  return loadAndAllocate();
}

tl::expected<void, StageFailure> NpuStage::execute(std::span<const Tensor> inputs,
                                                   OnRunFailure onRunFailure) {
  NpuStats& stats = npuStats();
  auto packed = packInputs(inputs);
  if (!packed) return tl::unexpected(StageFailure{packed.error(), FallbackReason::kRunFailed});
  if (auto ran = attempt(); !ran) {
    if (ran.error().code == ErrorCode::kNotOnNpu) {  // no rung moves work to the NPU
      return tl::unexpected(StageFailure{ran.error(), FallbackReason::kNotOnNpu});
    }
    if (onRunFailure == OnRunFailure::kFail) {
      return tl::unexpected(StageFailure{ran.error(), ran.error().code == ErrorCode::kTimeout
                                                          ? FallbackReason::kTimeout
                                                          : FallbackReason::kRunFailed});
    }
    if (auto recovered = climbLadder(inputs, ran.error()); !recovered) return recovered;
  }
  stats.runs.fetch_add(1, std::memory_order_relaxed);
  for (std::size_t i = 0; i < spec_.outputs.size(); ++i) {
    const NpuArgument* arg = argumentOf(spec_.outputs[i].name, NpuArgRole::kOutput);
    if (auto ok = unpackTensor(runtime_->buffer(arg->index), spec_.outputs[i], outputs_[i]); !ok) {
      return tl::unexpected(StageFailure{ok.error(), FallbackReason::kInvalidOutput});
    }
    if (auto ok = checkFinite(outputs_[i].values(),
                              fmt::format("NPU output '{}'", spec_.outputs[i].name));
        !ok) {
      stats.invalidOutputs.fetch_add(1, std::memory_order_relaxed);
      return tl::unexpected(StageFailure{ok.error(), FallbackReason::kInvalidOutput});
    }
  }
  if (compareWithReference_) {
    if (auto ok = reference_->run(inputs, referenceOutputs_); !ok) {
      return tl::unexpected(StageFailure{ok.error(), FallbackReason::kRunFailed});
    }
    float diff = 0;
    for (std::size_t i = 0; i < outputs_.size(); ++i) {
      diff = std::max(diff, maxAbsDiff(outputs_[i].values(), referenceOutputs_[i].values()));
    }
    stats.recordReferenceDiff(diff);
  }
  return {};
}

tl::expected<void, StageFailure> NpuStage::canary(OnRunFailure onRunFailure) {
  NpuStats& stats = npuStats();
  stats.canaryRuns.fetch_add(1, std::memory_order_relaxed);
  auto fail = [&](Error e) {
    stats.canaryFailures.fetch_add(1, std::memory_order_relaxed);
    return tl::unexpected(StageFailure{std::move(e), FallbackReason::kCanaryFailed});
  };
  const NpuCanary canary(manifest_, stage_, *reference_);
  auto trial = canary.prepare();
  if (!trial) return fail(trial.error());
  if (auto ran = execute(trial->inputs, onRunFailure); !ran) {
    // Not a wrong answer: no verdict (the run failed or was cut), or, for a photograph (the
    // Vitis AI EP's canary), no NPU at all.
    if (noVerdict(ran.error(), onRunFailure) ||
        (canary.fromImage() && ran.error().reason == FallbackReason::kNotOnNpu)) {
      return ran;
    }
    return fail(std::move(ran.error().error));
  }
  if (auto ok = canary.judge(*trial, outputs_); !ok) return fail(ok.error());
  return {};
}

bool NpuStage::noVerdict(const StageFailure& f, OnRunFailure onRunFailure) {
  // A run cut at its timeout, or any failed run under kFail (the ladder vetting a context):
  // the numbers were never compared, and the caller decides what comes next.
  return f.reason == FallbackReason::kTimeout ||
         (onRunFailure == OnRunFailure::kFail && f.reason == FallbackReason::kRunFailed);
}

const NpuArgument* NpuStage::argumentOf(const std::string& tensor, NpuArgRole role) const {
  for (const NpuArgument& a : spec_.arguments) {
    if (a.role == role && a.tensor == tensor) return &a;
  }
  return nullptr;  // the manifest guarantees one
}

Expected<void> NpuStage::loadAndAllocate() {
  if (auto ok = runtime_->load(spec_, manifest_.directory()); !ok) return ok;
  return runtime_->allocate();
}

tl::expected<void, StageFailure> NpuStage::climbLadder(std::span<const Tensor> inputs,
                                                       Error error) {
  const int first = error.code == ErrorCode::kTimeout ? 1 : 0;
  for (int rung = first; rung < 3; ++rung) {
    npuLog()->warn("npu: {}; {}", error.message,
                   rung == 0   ? "retrying the run"
                   : rung == 1 ? "recreating the hardware context"
                               : "reopening the device");
    Expected<void> ran;
    if (rung == 0) {
      npuStats().retries.fetch_add(1, std::memory_order_relaxed);
    } else if (auto vetted = rebuildAndVet(rung == 2); !vetted) {
      if (vetted.error().reason == FallbackReason::kCanaryFailed) return vetted;
      ran = tl::unexpected(vetted.error().error);
    } else {
      ran = packInputs(inputs);
    }
    if (ran) ran = attempt();
    if (ran) return {};
    error = ran.error();
  }
  // The last failure names the reason: runs that kept passing their timeout are `timeout`.
  return tl::unexpected(StageFailure{
      Error{error.code == ErrorCode::kTimeout ? ErrorCode::kTimeout : ErrorCode::kUnavailable,
            fmt::format("NPU stage '{}' failed after {}a new context and a reopened device: {}",
                        stage_.name, first == 0 ? "a retry, " : "", error.message)},
      error.code == ErrorCode::kTimeout ? FallbackReason::kTimeout : FallbackReason::kRunFailed});
}

tl::expected<void, StageFailure> NpuStage::rebuildAndVet(bool reopenDevice) {
  NpuStats& stats = npuStats();
  auto failed = [](Error e) {
    return tl::unexpected(StageFailure{std::move(e), FallbackReason::kRunFailed});
  };
  runtime_->unload();
  if (!reopenDevice) {
    stats.contextRecreations.fetch_add(1, std::memory_order_relaxed);
  } else {
    stats.deviceReopens.fetch_add(1, std::memory_order_relaxed);
    runtime_->closeDevice();
    if (auto ok = runtime_->openDevice(); !ok) return failed(ok.error());
  }
  if (auto ok = loadAndAllocate(); !ok) return failed(ok.error());
  auto vetted = canary(OnRunFailure::kFail);
  if (!vetted && vetted.error().reason == FallbackReason::kCanaryFailed) {
    Error& e = vetted.error().error;
    e.message = fmt::format("{} failed the canary: {}",
                            reopenDevice ? "a reopened device" : "a new context", e.message);
  }
  return vetted;
}

Expected<void> NpuStage::packInputs(std::span<const Tensor> inputs) {
  for (std::size_t i = 0; i < spec_.inputs.size(); ++i) {
    const NpuArgument* arg = argumentOf(spec_.inputs[i].name, NpuArgRole::kInput);
    if (auto ok = packTensor(inputs[i], spec_.inputs[i], runtime_->buffer(arg->index)); !ok) {
      return ok;
    }
  }
  return {};
}

Expected<void> NpuStage::attempt() {
  NpuStats& stats = npuStats();
  auto ok = runtime_->start();
  if (ok) ok = runtime_->wait(std::chrono::milliseconds(spec_.timeoutMs));
  if (!ok) {
    (ok.error().code == ErrorCode::kTimeout ? stats.timeouts : stats.runErrors)
        .fetch_add(1, std::memory_order_relaxed);
  }
  return ok;
}

}  // namespace vigil
