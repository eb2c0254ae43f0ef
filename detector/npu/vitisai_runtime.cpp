#include "detector/npu/vitisai_runtime.h"

#include <fmt/format.h>
#include <onnxruntime_c_api.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <utility>
#include <vector>

#include "detector/npu/npu_busy_time.h"
#include "detector/npu/npu_stats.h"
#include "detector/npu/ort_library.h"
#include "detector/npu/ort_stage_session.h"
#include "detector/npu/vitisai_report.h"

namespace vigil {

namespace {

std::shared_ptr<spdlog::logger> vitisLog() {
  auto l = spdlog::get("npu");
  return l ? l : spdlog::default_logger();
}

// Set while a Vitis AI session exists in this process.
std::atomic<bool> sessionOpen{false};

// Identity of the EP library beside ONNX Runtime: its size and modification time, so a new EP
// build gives a new cache key even under the same ONNX Runtime version.
std::string epLibraryIdentity(const std::filesystem::path& ortLibrary) {
  std::error_code ec;
  const auto ep = ortLibrary.parent_path() / "libonnxruntime_vitisai_ep.so";
  const auto size = std::filesystem::file_size(ep, ec);
  if (ec) return "absent";
  const auto mtime = std::filesystem::last_write_time(ep, ec).time_since_epoch().count();
  return fmt::format("{} bytes, mtime {}", size, mtime);
}

std::string kernelRelease() {
  std::ifstream in("/proc/sys/kernel/osrelease");
  std::string line;
  std::getline(in, line);
  return line;
}

using OwnedSessionOptions = std::unique_ptr<OrtSessionOptions, void (*)(OrtSessionOptions*)>;

// The options of a Vitis AI session: the session config entries `config`, and the EP appended
// with the plan's provider options (logged).
Expected<OwnedSessionOptions> vitisAiSessionOptions(
    const OrtLibrary& lib, const std::vector<std::pair<std::string, std::string>>& config,
    const VitisAiPlan& plan) {
  const OrtApi* api = lib.api;
  OrtSessionOptions* options = nullptr;
  if (auto ok = ortCheck(lib, api->CreateSessionOptions(&options)); !ok) {
    return tl::unexpected(ok.error());
  }
  OwnedSessionOptions owned(options, api->ReleaseSessionOptions);
  for (const auto& [key, value] : config) {
    if (auto ok = ortCheck(lib, api->AddSessionConfigEntry(options, key.c_str(), value.c_str()));
        !ok) {
      return tl::unexpected(ok.error());
    }
  }
  const auto providerOptions = vitisAiProviderOptions(plan);
  std::vector<const char*> keys, values;
  std::string logged;
  for (const auto& [key, value] : providerOptions) {
    keys.push_back(key.c_str());
    values.push_back(value.c_str());
    logged += fmt::format("{}{}={}", logged.empty() ? "" : ", ", key, value);
  }
  if (auto ok = ortCheck(lib, api->SessionOptionsAppendExecutionProvider_VitisAI(
                                  options, keys.data(), values.data(), keys.size()));
      !ok) {
    return tl::unexpected(ok.error());
  }
  vitisLog()->info("npu: Vitis AI EP options: {}; session.disable_cpu_ep_fallback=1", logged);
  return owned;
}

// Why the EP made no session of `model` (`error`, ONNX Runtime's): kNotOnNpu when it would have
// left nodes for the CPU, kUnavailable when it cannot compile the model at all.
tl::unexpected<Error> sessionRefused(const std::filesystem::path& model, const Error& error) {
  // ONNX Runtime's words when a node was left for the CPU EP under disabled fallback.
  if (error.message.find("fallback to CPU EP has been explicitly disabled") != std::string::npos) {
    return makeError(ErrorCode::kNotOnNpu,
                     "{}: the Vitis AI EP left nodes for the CPU and CPU fallback is disabled: {}",
                     model.string(), error.message);
  }
  return makeError(ErrorCode::kUnavailable, "{}: the Vitis AI EP cannot compile it: {}",
                   model.string(), error.message);
}

// Where a session of `model` came from, in `seconds`: an EP-context model (`fromContext`), the
// compiled model reused from `cache`, or a compile now, the slow start `vigil npu compile`
// saves.
void logSessionMade(const std::filesystem::path& model, double seconds, bool fromContext,
                    bool reused, const std::filesystem::path& cache) {
  if (fromContext) {
    vitisLog()->info("npu: loaded the EP-context model {} ({:.1f} s, no compile)", model.string(),
                     seconds);
  } else if (reused) {
    vitisLog()->info("npu: reused the compiled model in {} ({:.1f} s)", cache.string(), seconds);
  } else {
    vitisLog()->warn(
        "npu: compiled {} for the NPU in {:.1f} s, kept in {} (`vigil npu compile` does this "
        "once, before the first start)",
        model.string(), seconds, cache.string());
  }
}

class VitisAiRuntime final : public NpuRuntime {
 public:
  explicit VitisAiRuntime(VitisAiSettings settings) : settings_(std::move(settings)) {}
  ~VitisAiRuntime() override {
    unload();
    if (env_ != nullptr) lib_->api->ReleaseEnv(env_);
  }
  VitisAiRuntime(const VitisAiRuntime&) = delete;
  VitisAiRuntime& operator=(const VitisAiRuntime&) = delete;

  std::string describe() const override {
    if (lib_ == nullptr) {
      return fmt::format("ONNX Runtime Vitis AI EP ({})",
                         settings_.onnxRuntime.empty()
                             ? "library from $VIGIL_ORT_ROOT, else the system's"
                             : settings_.onnxRuntime);
    }
    std::string flow;
    if (!plan_.compiler.empty()) {
      flow = plan_.target.empty() ? ", BF16 flow" : ", integer flow, target " + plan_.target;
    }
    return fmt::format("ONNX Runtime {} Vitis AI EP ({}){}{}", lib_->version, lib_->path.string(),
                       flow, plan_.cacheKey.empty() ? "" : ", cache " + cachePath().string());
  }

  Expected<void> openDevice() override {
    auto lib = loadOrtLibrary(settings_.onnxRuntime);
    if (!lib) return makeError(ErrorCode::kUnavailable, "{}", lib.error().message);
    lib_ = *lib;
    if (!session_) session_ = std::make_unique<OrtStageSession>(*lib_);
    if (env_ == nullptr) {
      if (auto ok = check(createLoggedOrtEnv(*lib_, "vigil-npu", &env_)); !ok) {
        return ok;
      }
    }
    return requireVitisAiEp();
  }

  Expected<void> load(const NpuStageSpec& spec, const std::filesystem::path& directory) override {
    if (auto ok = prepare(spec, directory); !ok) return ok;
    const VitisAiSessionSource source = vitisAiSessionSource(plan_, directory / spec.model);
    if (source.fromContext) {
      auto ok = createSession(source.model, vitisAiSessionConfig(), true);
      if (ok) return checkPlacement(reports().contextCopy());
      vitisLog()->warn("npu: the EP-context model {} does not load ({}); compiling {} instead",
                       source.model.string(), ok.error().message, spec.model);
    }
    if (auto ok = createSession(directory / spec.model, vitisAiSessionConfig(), false); !ok) {
      return ok;
    }
    return checkPlacement({});
  }

  // `vigil npu compile`: a session whose creation writes the EP-context model (and the operator
  // report beside it, which a session loaded from it does not write again), then released.
  Expected<VitisAiContextMade> compileContext(const NpuStageSpec& spec,
                                              const std::filesystem::path& directory) {
    if (auto ok = prepare(spec, directory); !ok) return tl::unexpected(ok.error());
    const std::filesystem::path file = vitisAiContextModel(plan_);
    std::error_code ec;
    std::filesystem::remove(file, ec);
    const auto t0 = std::chrono::steady_clock::now();
    auto ok = createSession(directory / spec.model, vitisAiContextWriteConfig(file), false);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (ok) ok = checkPlacement({});
    // Written as a session would take it (vitisAiSessionSource's rule: there and not empty).
    if (ok && !vitisAiSessionSource(plan_, directory / spec.model).fromContext) {
      ok = makeError(ErrorCode::kBackendFailure,
                     "the session was made but the EP wrote no EP-context model at {}",
                     file.string());
    }
    if (ok) reports().keepForContext();
    unload();
    if (!ok) return tl::unexpected(ok.error());
    return VitisAiContextMade{file, seconds, npuStats().graphNodesNpu.load()};
  }

  Expected<void> allocate() override { return session_->bind(spec_); }

  std::span<std::byte> buffer(int argIndex) override { return session_->buffer(argIndex); }

  Expected<void> start() override { return {}; }

  // The run itself, synchronous in ONNX Runtime, cut by the session's watchdog at `timeout`.
  Expected<void> wait(std::chrono::milliseconds timeout) override {
    if (auto ran = session_->run(timeout); !ran) return ran;
    auto ok = busy_.afterRun();
    if (ok && busy_.unverifiable() && !saidUnverifiable_) {
      saidUnverifiable_ = true;
      vitisLog()->warn(
          "npu: the amdxdna driver prints no busy time in fdinfo: that the NPU did the work rests "
          "on the operator report and the canary only");
    }
    return ok;
  }

  void unload() override {
    if (session_) session_->release();
    if (ownsSession_) sessionOpen.store(false);
    ownsSession_ = false;
  }

  void closeDevice() override {}

 private:
  // One session per process, the plan and the cache key: what every session needs first.
  Expected<void> prepare(const NpuStageSpec& spec, const std::filesystem::path& directory) {
    if (sessionOpen.exchange(true)) {
      return makeError(ErrorCode::kUnsupported,
                       "a Vitis AI NPU session already exists in this process; a second one turns "
                       "the first one's outputs to NaN (RyzenAI-SW#402): one per process");
    }
    ownsSession_ = true;
    spec_ = spec;
    auto plan = planVitisAi(spec, directory, env(), settings_);
    if (!plan) return tl::unexpected(plan.error());
    plan_ = std::move(*plan);
    auto key = cacheKey(directory);
    if (!key) return tl::unexpected(key.error());
    plan_.cacheKey = *key;
    return {};
  }

  const NpuEnvironment& env() {
    if (!environment_) environment_ = probeNpuEnvironment();
    return *environment_;
  }

  std::filesystem::path cachePath() const { return plan_.cacheDir / plan_.cacheKey; }

  Expected<void> check(OrtStatus* status, ErrorCode code = ErrorCode::kBackendFailure) const {
    return ortCheck(*lib_, status, code);
  }

  Expected<void> requireVitisAiEp() {
    OrtSessionOptions* probe = nullptr;
    if (auto ok = check(lib_->api->CreateSessionOptions(&probe)); !ok) return ok;
    OrtStatus* status =
        lib_->api->SessionOptionsAppendExecutionProvider_VitisAI(probe, nullptr, nullptr, 0);
    lib_->api->ReleaseSessionOptions(probe);
    if (status == nullptr) return {};
    std::string why = lib_->api->GetErrorMessage(status);
    lib_->api->ReleaseStatus(status);
    return makeError(ErrorCode::kUnsupported,
                     "the ONNX Runtime at {} (version {}) has no Vitis AI execution provider "
                     "({}): install AMD's Ryzen AI Software (see docs/ryzen-ai.md) and point "
                     "detector.onnxruntime (or VIGIL_ORT_ROOT) at its onnxruntime/lib",
                     lib_->path.string(), lib_->version, why);
  }

  Expected<std::string> cacheKey(const std::filesystem::path& directory) {
    auto sha = sha256File(directory / spec_.model);
    if (!sha) return tl::unexpected(sha.error());
    const NpuEnvironment& e = env();
    VitisAiCacheInputs in{directory.filename().string(),
                          *sha,
                          lib_->version,
                          epLibraryIdentity(lib_->path),
                          e.driverVersion.empty() ? "kernel " + kernelRelease() : e.driverVersion,
                          e.firmwareVersion,
                          plan_.target};
    return vitisAiCacheKey(in);
  }

  // The operator report's files for this plan's cache key.
  VitisAiReportFiles reports() const { return {plan_.cacheDir, plan_.cacheKey}; }

  // A session of `model` with the session config entries `config`; `fromContext`: `model` is an
  // EP-context model (loaded, not compiled).
  Expected<void> createSession(const std::filesystem::path& model,
                               const std::vector<std::pair<std::string, std::string>>& config,
                               bool fromContext) {
    std::error_code ec;
    std::filesystem::create_directories(plan_.cacheDir, ec);
    if (ec) {
      return makeError(ErrorCode::kPermissionDenied, "cannot create the NPU cache {}: {}",
                       plan_.cacheDir.string(), ec.message());
    }
    const bool reuse = std::filesystem::exists(cachePath(), ec);
    reports().prepareForSession();
    auto options = vitisAiSessionOptions(*lib_, config, plan_);
    if (!options) return tl::unexpected(options.error());
    const auto t0 = std::chrono::steady_clock::now();
    OrtSession* session = nullptr;
    if (auto ok = check(lib_->api->CreateSession(env_, model.c_str(), options->get(), &session));
        !ok) {
      return sessionRefused(model, ok.error());
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (auto ok = session_->adopt(session); !ok) return ok;
    logSessionMade(model, seconds, fromContext, reuse, cachePath());
    return {};
  }

  // The operator report against the bundle's minimum; `kept`, when not empty, is read when the
  // EP wrote none this time (a session loaded from an EP-context model).
  Expected<void> checkPlacement(const std::filesystem::path& kept) {
    auto report = reports().read(kept);
    if (!report) return tl::unexpected(report.error());
    const NpuNodeCounts& counts = report->counts;
    NpuStats& stats = npuStats();
    stats.graphNodesNpu.store(counts.npu, std::memory_order_relaxed);
    stats.graphNodesCpu.store(counts.cpu, std::memory_order_relaxed);
    vitisLog()->info("npu: Vitis AI EP placed {} of {} nodes on the NPU, {} on the CPU", counts.npu,
                     counts.all, counts.cpu);
    if (auto problem = placementProblem(counts, spec_.minNpuNodes)) {
      return makeError(ErrorCode::kNotOnNpu, "{} ({})", *problem, report->file.string());
    }
    busy_.restart();
    return {};
  }

  VitisAiSettings settings_;
  const OrtLibrary* lib_ = nullptr;
  OrtEnv* env_ = nullptr;
  std::optional<NpuEnvironment> environment_;
  NpuStageSpec spec_;
  VitisAiPlan plan_;
  std::unique_ptr<OrtStageSession> session_;  // made with lib_, kept across unload()
  bool ownsSession_ = false;
  NpuBusyWatch busy_;
  bool saidUnverifiable_ = false;
};

}  // namespace

std::unique_ptr<NpuRuntime> makeVitisAiRuntime(VitisAiSettings settings) {
  return std::make_unique<VitisAiRuntime>(std::move(settings));
}

Expected<VitisAiContextMade> compileVitisAiContext(const ModelManifest& bundle,
                                                   VitisAiSettings settings) {
  const StageSpec* stage = bundle.npuStage();
  if (stage == nullptr || stage->npu->runtime != "vitisai") {
    return makeError(ErrorCode::kInvalidArgument,
                     "{}: no stage runs on the Vitis AI EP (runtime: vitisai); only those compile",
                     bundle.directory().string());
  }
  VitisAiRuntime runtime(std::move(settings));
  if (auto ok = runtime.openDevice(); !ok) return tl::unexpected(ok.error());
  return runtime.compileContext(*stage->npu, bundle.directory());
}

Expected<std::string> probeVitisAi(const VitisAiSettings& settings) {
  VitisAiRuntime runtime(settings);
  if (auto ok = runtime.openDevice(); !ok) return tl::unexpected(ok.error());
  return runtime.describe();
}

}  // namespace vigil
