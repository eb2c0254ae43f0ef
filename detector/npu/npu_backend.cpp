#include "detector/npu/npu_backend.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>

#include "detector/cpu_stage.h"
#include "detector/npu/cpu_twin.h"
#include "detector/npu/npu_stage.h"
#include "foundation/background_work.h"

#ifdef VIGIL_WITH_XRT
#include "detector/npu/xrt_runtime.h"
#endif
#ifdef VIGIL_WITH_ORT
#include "detector/npu/ort_cpu_runtime.h"
#include "detector/npu/vitisai_runtime.h"
#endif

namespace vigil {

std::string_view fallbackReasonName(FallbackReason reason) {
  switch (reason) {
    case FallbackReason::kNpuUnavailable:
      return "npu_unavailable";
    case FallbackReason::kCanaryFailed:
      return "canary_failed";
    case FallbackReason::kInvalidOutput:
      return "invalid_output";
    case FallbackReason::kRunFailed:
      return "run_failed";
    case FallbackReason::kNotOnNpu:
      return "not_on_npu";
    case FallbackReason::kTimeout:
      return "timeout";
    case FallbackReason::kCount:
      break;
  }
  return "unknown";
}

NpuStats& npuStats() {
  static NpuStats stats;
  return stats;
}

namespace {

// target: npu1/npu2 for a precompiled design, empty when the runtime chooses (vitisai).
std::string npuDeviceText(std::string_view target, std::string_view runtime) {
  return fmt::format("{}NPU via {}, CPU stages on {}",
                     target.empty() ? "" : fmt::format("{} ", target), runtime,
                     target.empty() ? "the CPU reference" : "OpenCV DNN");
}

// The stages after the NPU stage, on the CPU reference, chained by tensor name.
class CpuTail {
 public:
  static Expected<CpuTail> create(const ModelManifest& manifest, std::size_t first) {
    CpuTail tail;
    for (std::size_t i = first; i < manifest.stages.size(); ++i) {
      const StageSpec& s = manifest.stages[i];
      auto stage = loadCpuStage(manifest, s);
      if (!stage) return tl::unexpected(stage.error());
      std::vector<Tensor> ins;
      std::vector<Tensor> outs;
      for (const TensorSpec& t : s.inputs) ins.push_back(zeroTensor(t));
      for (const TensorSpec& t : s.outputs) outs.push_back(zeroTensor(t));
      tail.stages_.push_back({std::move(*stage), std::move(ins), std::move(outs)});
    }
    return tail;
  }

  // `from`: the NPU stage's outputs. The last stage's first output goes to `output`.
  Expected<void> run(std::span<const Tensor> from, Tensor& output) {
    std::span<const Tensor> previous = from;
    for (Entry& e : stages_) {
      for (Tensor& in : e.inputs) {
        const Tensor* src = nullptr;
        for (const Tensor& p : previous) {
          if (p.name == in.name) src = &p;
        }
        if (src == nullptr || src->data.size() != in.data.size()) {
          return makeError(ErrorCode::kBackendFailure,
                           "stage '{}' needs tensor '{}', which the stage before does not produce",
                           e.stage->spec().name, in.name);
        }
        std::copy(src->data.begin(), src->data.end(), in.data.begin());
      }
      if (auto ok = e.stage->run(e.inputs, e.outputs); !ok) return ok;
      previous = e.outputs;
    }
    const Tensor& last = previous.front();
    if (output.shape != last.shape) output.resize(last.shape);
    output.name = last.name;
    std::copy(last.data.begin(), last.data.end(), output.data.begin());
    return {};
  }

 private:
  struct Entry {
    std::unique_ptr<CpuStage> stage;
    std::vector<Tensor> inputs;
    std::vector<Tensor> outputs;
  };
  std::vector<Entry> stages_;
};

class NpuBackend final : public InferenceBackend {
 public:
  NpuBackend(std::unique_ptr<NpuStage> stage, CpuTail tail, const NpuStageSpec& spec,
             NpuBackendConfig config)
      : stage_(std::move(stage)), tail_(std::move(tail)), spec_(spec), config_(std::move(config)) {
    lastCanary_ = config_.now();
  }

  std::string_view name() const override { return "npu"; }
  std::string device() const override { return npuDeviceText(spec_.target, stage_->describe()); }

  Expected<void> infer(const Tensor& input, Tensor& output) override {
    auto ok = inferNpu(input, output);
    if (!ok) return tl::unexpected(ok.error().error);
    return {};
  }

  // For `auto`: the failure with its fallback reason.
  tl::expected<void, StageFailure> inferNpu(const Tensor& input, Tensor& output) {
    if (spec_.canaryIntervalS > 0 &&
        config_.now() - lastCanary_ >= std::chrono::seconds(spec_.canaryIntervalS)) {
      lastCanary_ = config_.now();
      if (auto ok = stage_->canary(); !ok) {
        npuLog()->error("npu: periodic canary: {}", ok.error().error.message);
        return ok;
      }
    }
    if (auto ok = stage_->execute(std::span(&input, 1)); !ok) return ok;
    if (auto ok = tail_.run(stage_->outputs(), output); !ok) {
      return tl::unexpected(StageFailure{ok.error(), FallbackReason::kRunFailed});
    }
    return {};
  }

 private:
  std::unique_ptr<NpuStage> stage_;
  CpuTail tail_;
  const NpuStageSpec& spec_;
  NpuBackendConfig config_;
  std::chrono::steady_clock::time_point lastCanary_;
};

// Builds the NPU backend and runs the start-up canary; the reason says what `auto` reports.
tl::expected<std::unique_ptr<NpuBackend>, StageFailure> buildNpu(
    const std::shared_ptr<const ModelManifest>& shared, const NpuBackendConfig& config) {
  const ModelManifest& manifest = *shared;
  auto unavailable = [](Error e) {
    return tl::unexpected(StageFailure{std::move(e), FallbackReason::kNpuUnavailable});
  };
  const StageSpec* stage = manifest.npuStage();
  if (stage == nullptr) {
    return unavailable(Error{ErrorCode::kUnsupported,
                             fmt::format("{}: no stage has an npu section; this model runs on the "
                                         "CPU only (scripts/split-model.py makes an NPU bundle)",
                                         manifest.manifestPath.string())});
  }
  if (stage != &manifest.stages.front()) {
    return unavailable(Error{
        ErrorCode::kUnsupported,
        fmt::format("{}: the NPU stage must be the first stage", manifest.manifestPath.string())});
  }
  NpuRuntimeFactory factory = config.runtimeFactory;
  if (!factory) factory = defaultNpuRuntimeFactory(*stage->npu, config.vitisai);
  if (!factory) {
    return unavailable(Error{
        ErrorCode::kUnsupported,
        stage->npu->runtime == "vitisai"
            ? "this build has no Vitis AI runtime (configure with ONNX Runtime's headers, "
              "scripts/fetch-onnxruntime.sh)"
            : "this build has no XRT (configure with libxrt-dev installed and VIGIL_WITH_XRT=ON)"});
  }
  auto reference = loadCpuStage(manifest, *stage);
  if (!reference) return unavailable(reference.error());
  auto tail = CpuTail::create(manifest, 1);
  if (!tail) return unavailable(tail.error());
  auto runtime = factory();
  if (!runtime) return unavailable(Error{ErrorCode::kUnsupported, "no NPU runtime"});
  auto npu = std::make_unique<NpuStage>(shared, *stage, std::move(runtime), std::move(*reference),
                                        config.compareWithReference);
  if (auto ok = npu->bringUp(); !ok) {
    return tl::unexpected(StageFailure{ok.error(), ok.error().code == ErrorCode::kNotOnNpu
                                                       ? FallbackReason::kNotOnNpu
                                                       : FallbackReason::kNpuUnavailable});
  }
  if (auto ok = npu->canary(); !ok) return tl::unexpected(ok.error());
  npuLog()->info("npu: canary passed on {}", npu->describe());
  return std::make_unique<NpuBackend>(std::move(npu), std::move(*tail), *stage->npu, config);
}

class AutoBackend final : public InferenceBackend {
 public:
  AutoBackend(const ModelManifest& manifest, std::unique_ptr<InferenceBackend> cpu,
              NpuBackendConfig config)
      : manifest_(std::make_shared<const ModelManifest>(manifest)),
        cpu_(std::move(cpu)),
        config_(std::move(config)) {
    sides_.cpuName = std::string(cpu_->name());
    sides_.cpuDevice = cpu_->device();
    const StageSpec* stage = manifest_->npuStage();
    NpuRuntimeFactory factory = config_.runtimeFactory;
    if (!factory && stage != nullptr)
      factory = defaultNpuRuntimeFactory(*stage->npu, config_.vitisai);
    auto runtime = factory ? factory() : nullptr;
    sides_.npuDevice = npuDeviceText(stage != nullptr && stage->npu ? stage->npu->target : "no",
                                     runtime ? runtime->describe() : "no NPU runtime");
  }

  const AutoBackendSides& sides() const { return sides_; }

  std::string_view name() const override { return "auto"; }
  std::string device() const override {
    if (npu_) return npu_->device();
    return fmt::format("{} (NPU not in use: {})", cpu_->device(), lastReason_);
  }

  ~AutoBackend() override {
    if (!retryThread_.joinable()) return;
    // A retry still bringing the NPU up is waited for (its device must be closed by it before a
    // reload opens the next session), except at the process's end: it then runs on detached,
    // counted, and the process ends without it (background_work.h).
    if (background::isProcessEnding()) {
      std::lock_guard lock(retry_->mutex);
      if (!retry_->built) {
        retry_->detached = true;
        background::detachedStarted();
        retryThread_.detach();
        return;
      }
    }
    retryThread_.join();
  }

  // Tries the NPU (with its start-up canary) here and now: at creation. On failure the CPU
  // answers, and the NPU is tried again after retryAfter, in the background (retryInBackground).
  void tryNpu() {
    nextTry_ = config_.now() + config_.retryAfter;
    adopt(buildNpu(manifest_, config_));
  }

  Expected<void> infer(const Tensor& input, Tensor& output) override {
    if (!npu_) retryInBackground();
    if (npu_) {
      auto ok = npu_->inferNpu(input, output);
      if (ok) {
        npuStats().npuActive.store(true, std::memory_order_relaxed);
        return {};
      }
      npu_.reset();
      nextTry_ = config_.now() + config_.retryAfter;
      fallBack(ok.error());
    }
    npuStats().npuActive.store(false, std::memory_order_relaxed);
    return cpu_->infer(input, output);
  }
  // The CPU side's run is cut; an NPU run in flight ends by itself or by its own timeout.
  void interrupt() override { cpu_->interrupt(); }

 private:
  using Built = tl::expected<std::unique_ptr<NpuBackend>, StageFailure>;

  // While the CPU answers: when the retry is due, the NPU is opened, loaded and its canary run on
  // a thread of its own (seconds on a real device), so that detection goes on meanwhile; the
  // frame after it is done takes the NPU, or the CPU keeps answering until the next retry.
  void retryInBackground() {
    if (retryThread_.joinable()) {
      std::optional<Built> built;
      {
        std::lock_guard lock(retry_->mutex);
        if (!retry_->built) return;
        built = std::move(retry_->built);
      }
      retryThread_.join();
      adopt(std::move(*built));
      return;
    }
    if (config_.now() < nextTry_) return;
    nextTry_ = config_.now() + config_.retryAfter;
    retry_ = std::make_shared<Retry>();
    retryThread_ = std::thread([retry = retry_, manifest = manifest_, config = config_] {
      Built built = buildNpu(manifest, config);
      std::unique_lock lock(retry->mutex);
      if (!retry->detached) {
        retry->built = std::move(built);
        return;
      }
      lock.unlock();
      if (built) built->reset();  // the device closes before the work counts as ended
      background::detachedEnded();
    });
  }

  void adopt(Built built) {
    if (!built) {
      fallBack(built.error());
      return;
    }
    npu_ = std::move(*built);
    npuStats().npuActive.store(true, std::memory_order_relaxed);
    if (!lastReason_.empty()) npuLog()->warn("auto: the NPU is back; inference returns to it");
    lastReason_.clear();
  }

  void fallBack(const StageFailure& f) {
    npuStats().npuActive.store(false, std::memory_order_relaxed);
    npuStats().countFallback(f.reason);
    lastReason_ = std::string(fallbackReasonName(f.reason));
    npuLog()->error("auto: FALLING BACK TO THE CPU ({}): {}; the NPU is tried again in {} s",
                    lastReason_, f.error.message, config_.retryAfter.count());
  }

  std::shared_ptr<const ModelManifest> manifest_;
  std::unique_ptr<InferenceBackend> cpu_;
  NpuBackendConfig config_;
  AutoBackendSides sides_;  // fixed at creation
  std::unique_ptr<NpuBackend> npu_;
  // The NPU being brought up again on a thread of its own: its result, once there.
  struct Retry {
    std::mutex mutex;
    std::optional<Built> built;
    bool detached = false;  // the backend went at the process's end without waiting
  };
  std::shared_ptr<Retry> retry_;
  std::thread retryThread_;
  std::string lastReason_;
  std::chrono::steady_clock::time_point nextTry_{};
};

// The replay decorator for the noop shim.
class ReplayRuntime final : public NpuRuntime {
 public:
  ReplayRuntime(std::unique_ptr<NpuRuntime> inner, std::filesystem::path dir,
                const NpuStageSpec& spec)
      : inner_(std::move(inner)), dir_(std::move(dir)), spec_(spec) {}

  std::string describe() const override {
    return inner_->describe() + " replaying recorded outputs from " + dir_.string();
  }
  Expected<void> openDevice() override { return inner_->openDevice(); }
  Expected<void> load(const NpuStageSpec& spec, const std::filesystem::path& d) override {
    return inner_->load(spec, d);
  }
  Expected<void> allocate() override { return inner_->allocate(); }
  std::span<std::byte> buffer(int argIndex) override { return inner_->buffer(argIndex); }
  Expected<void> start() override {
    std::vector<std::span<const std::byte>> inputs;
    for (const NpuArgument& a : spec_.arguments) {
      if (a.role == NpuArgRole::kInput) inputs.emplace_back(inner_->buffer(a.index));
    }
    auto path = dir_ / fmt::format("{:016x}.bin", replayKey(inputs));
    if (auto bytes = readBytes(path)) {
      std::size_t offset = 0;
      for (const NpuArgument& a : spec_.arguments) {
        if (a.role != NpuArgRole::kOutput) continue;
        auto out = inner_->buffer(a.index);
        if (offset + out.size() > bytes->size()) break;
        std::memcpy(out.data(), bytes->data() + offset, out.size());
        offset += out.size();
      }
    }
    return inner_->start();
  }
  Expected<void> wait(std::chrono::milliseconds timeout) override { return inner_->wait(timeout); }
  void unload() override { inner_->unload(); }
  void closeDevice() override { inner_->closeDevice(); }

 private:
  std::unique_ptr<NpuRuntime> inner_;
  std::filesystem::path dir_;
  NpuStageSpec spec_;
};

}  // namespace

std::uint64_t replayKey(std::span<const std::span<const std::byte>> inputs) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (auto in : inputs) {
    for (std::byte b : in) {
      h ^= static_cast<std::uint64_t>(b);
      h *= 0x100000001b3ULL;
    }
  }
  return h;
}

std::unique_ptr<NpuRuntime> makeReplayRuntime(std::unique_ptr<NpuRuntime> inner,
                                              std::filesystem::path directory,
                                              const NpuStageSpec& spec) {
  return std::make_unique<ReplayRuntime>(std::move(inner), std::move(directory), spec);
}

Expected<std::string> vitisAiRuntimeState(const VitisAiSettings& settings) {
#ifdef VIGIL_WITH_ORT
  return probeVitisAi(settings);
#else
  (void)settings;
  return makeError(ErrorCode::kUnsupported,
                   "not in this build (configure with ONNX Runtime's headers: "
                   "scripts/fetch-onnxruntime.sh)");
#endif
}

std::optional<AutoBackendSides> autoBackendSides(const InferenceBackend& backend) {
  if (const auto* a = dynamic_cast<const AutoBackend*>(&backend)) return a->sides();
  return std::nullopt;
}

NpuRuntimeFactory defaultNpuRuntimeFactory(const NpuStageSpec& spec,
                                           const VitisAiSettings& vitisai) {
  if (spec.runtime == "vitisai") {
#ifdef VIGIL_WITH_ORT
    return [vitisai] { return makeVitisAiRuntime(vitisai); };
#else
    (void)vitisai;
    return {};
#endif
  }
#ifdef VIGIL_WITH_XRT
  return [] { return makeXrtRuntime(); };
#else
  return {};
#endif
}

NpuRuntimeFactory ortCpuStageRuntimeFactory(const VitisAiSettings& settings) {
#ifdef VIGIL_WITH_ORT
  return [settings] { return makeOrtCpuStageRuntime(settings); };
#else
  (void)settings;
  return {};
#endif
}

Expected<std::unique_ptr<InferenceBackend>> createNpuBackend(const ModelManifest& manifest,
                                                             const BackendOptions& options,
                                                             const NpuBackendConfig& config) {
  NpuBackendConfig withOptions = config;
  withOptions.compareWithReference = options.compareWithReference;
  auto built = buildNpu(std::make_shared<const ModelManifest>(manifest), withOptions);
  if (!built) return tl::unexpected(built.error().error);
  return std::unique_ptr<InferenceBackend>(std::move(*built));
}

Expected<std::unique_ptr<InferenceBackend>> createAutoBackend(const ModelManifest& manifest,
                                                              const BackendOptions& options,
                                                              const NpuBackendConfig& config) {
  auto cpu = createAutoCpuSide(manifest, options);  // the bundle's CPU twin when it has one
  if (!cpu) return cpu;
  NpuBackendConfig withOptions = config;
  withOptions.compareWithReference = options.compareWithReference;
  auto backend = std::make_unique<AutoBackend>(manifest, std::move(*cpu), withOptions);
  backend->tryNpu();
  return std::unique_ptr<InferenceBackend>(std::move(backend));
}

namespace {

// The replay directory applies only under the noop shim; anywhere else it would hide the NPU.
NpuBackendConfig defaultConfig(const ModelManifest& manifest, const BackendOptions& options) {
  NpuBackendConfig config;
  config.vitisai = options.vitisai;
  const char* replay = std::getenv("VIGIL_NOOP_REPLAY_DIR");
  const char* mode = std::getenv("XCL_EMULATION_MODE");
  const StageSpec* stage = manifest.npuStage();
  if (stage == nullptr || stage->npu->runtime != "xrt") return config;
  auto factory = defaultNpuRuntimeFactory(*stage->npu, config.vitisai);
  if (replay != nullptr && *replay != '\0' && factory) {
    if (mode == nullptr || std::string_view(mode) != "noop") {
      npuLog()->error("npu: VIGIL_NOOP_REPLAY_DIR is ignored: XCL_EMULATION_MODE is not noop");
    } else {
      npuLog()->warn("npu: XRT noop shim with recorded outputs from {}: NOTHING RUNS ON AN NPU",
                     replay);
      std::filesystem::path dir = replay;
      NpuStageSpec spec = *stage->npu;
      config.runtimeFactory = [factory, dir, spec] {
        return makeReplayRuntime(factory(), dir, spec);
      };
    }
  }
  return config;
}

}  // namespace

Expected<std::unique_ptr<InferenceBackend>> createNpuBackendDefault(const ModelManifest& manifest,
                                                                    const BackendOptions& options) {
  return createNpuBackend(manifest, options, defaultConfig(manifest, options));
}

Expected<std::unique_ptr<InferenceBackend>> createAutoBackendDefault(
    const ModelManifest& manifest, const BackendOptions& options) {
  return createAutoBackend(manifest, options, defaultConfig(manifest, options));
}

}  // namespace vigil
