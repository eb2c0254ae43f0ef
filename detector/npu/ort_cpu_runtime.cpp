#include "detector/npu/ort_cpu_runtime.h"

#include <fmt/format.h>
#include <onnxruntime_c_api.h>

#include "detector/npu/ort_library.h"
#include "detector/npu/ort_stage_session.h"

namespace vigil {

namespace {

class OrtCpuStageRuntime final : public NpuRuntime {
 public:
  explicit OrtCpuStageRuntime(VitisAiSettings settings) : settings_(std::move(settings)) {}
  ~OrtCpuStageRuntime() override {
    session_.reset();
    if (env_ != nullptr) lib_->api->ReleaseEnv(env_);
  }
  OrtCpuStageRuntime(const OrtCpuStageRuntime&) = delete;
  OrtCpuStageRuntime& operator=(const OrtCpuStageRuntime&) = delete;

  std::string describe() const override {
    return fmt::format("ONNX Runtime {} CPU execution provider ({}), not an NPU",
                       lib_ != nullptr ? lib_->version : "",
                       lib_ != nullptr ? lib_->path.string() : settings_.onnxRuntime);
  }

  Expected<void> openDevice() override {
    auto lib = loadOrtLibrary(settings_.onnxRuntime);
    if (!lib) return makeError(ErrorCode::kUnavailable, "{}", lib.error().message);
    lib_ = *lib;
    if (!session_) session_ = std::make_unique<OrtStageSession>(*lib_);
    if (env_ != nullptr) return {};
    return ortCheck(*lib_, createLoggedOrtEnv(*lib_, "vigil-npu-cpu", &env_));
  }

  Expected<void> load(const NpuStageSpec& spec, const std::filesystem::path& directory) override {
    spec_ = spec;
    const OrtApi* api = lib_->api;
    OrtSessionOptions* options = nullptr;
    if (auto ok = ortCheck(*lib_, api->CreateSessionOptions(&options)); !ok) return ok;
    std::unique_ptr<OrtSessionOptions, void (*)(OrtSessionOptions*)> owned(
        options, api->ReleaseSessionOptions);
    if (auto ok = ortCheck(*lib_, api->SetIntraOpNumThreads(options, 1)); !ok) return ok;
    OrtSession* session = nullptr;
    const std::filesystem::path model = directory / spec.model;
    if (auto ok = ortCheck(*lib_, api->CreateSession(env_, model.c_str(), options, &session),
                           ErrorCode::kUnavailable);
        !ok) {
      return ok;
    }
    return session_->adopt(session);
  }

  Expected<void> allocate() override { return session_->bind(spec_); }
  std::span<std::byte> buffer(int argIndex) override { return session_->buffer(argIndex); }
  Expected<void> start() override { return {}; }
  Expected<void> wait(std::chrono::milliseconds timeout) override { return session_->run(timeout); }
  void unload() override {
    if (session_) session_->release();
  }
  void closeDevice() override {}

 private:
  VitisAiSettings settings_;
  const OrtLibrary* lib_ = nullptr;
  OrtEnv* env_ = nullptr;
  NpuStageSpec spec_;
  std::unique_ptr<OrtStageSession> session_;
};

}  // namespace

std::unique_ptr<NpuRuntime> makeOrtCpuStageRuntime(VitisAiSettings settings) {
  return std::make_unique<OrtCpuStageRuntime>(std::move(settings));
}

}  // namespace vigil
