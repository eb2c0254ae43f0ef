#include "detector/npu/ort_stage_session.h"

#include <onnxruntime_c_api.h>

namespace vigil {

Expected<void> ortCheck(const OrtLibrary& lib, OrtStatus* status, ErrorCode code) {
  if (status == nullptr) return {};
  std::string message = lib.api->GetErrorMessage(status);
  lib.api->ReleaseStatus(status);
  return makeError(code, "ONNX Runtime {} ({}): {}", lib.version, lib.path.string(), message);
}

Expected<void> OrtStageSession::adopt(OrtSession* session) {
  release();
  session_ = session;
  return ortCheck(lib_, lib_.api->CreateRunOptions(&runOptions_));
}

Expected<void> OrtStageSession::bind(const NpuStageSpec& spec) {
  const OrtApi* api = lib_.api;
  if (memory_ == nullptr) {
    if (auto ok = ortCheck(
            lib_, api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &memory_));
        !ok) {
      return ok;
    }
  }
  for (const NpuArgument& a : spec.arguments) {
    if (a.role != NpuArgRole::kInput && a.role != NpuArgRole::kOutput) continue;
    const auto& list = a.role == NpuArgRole::kInput ? spec.inputs : spec.outputs;
    const DeviceTensorSpec* t = nullptr;
    for (const DeviceTensorSpec& d : list) {
      if (d.name == a.tensor) t = &d;
    }
    if (t == nullptr) continue;
    Binding b;
    b.index = a.index;
    b.name = t->name;
    b.input = a.role == NpuArgRole::kInput;
    b.data.assign(a.bytes, std::byte{0});
    if (auto ok =
            ortCheck(lib_, api->CreateTensorWithDataAsOrtValue(
                               memory_, b.data.data(), b.data.size(), t->shape.data(),
                               t->shape.size(), ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &b.value));
        !ok) {
      return ok;
    }
    bindings_.push_back(std::move(b));
  }
  // The names point into bindings_, which no longer grows.
  for (Binding& b : bindings_) {
    (b.input ? inNames_ : outNames_).push_back(b.name.c_str());
    if (b.input) {
      ins_.push_back(b.value);
    } else {
      outs_.push_back(b.value);
    }
  }
  return {};
}

std::span<std::byte> OrtStageSession::buffer(int argIndex) {
  for (Binding& b : bindings_) {
    if (b.index == argIndex) return b.data;
  }
  return {};
}

Expected<void> OrtStageSession::run(std::chrono::milliseconds timeout) {
  const OrtApi* api = lib_.api;
  // A cut that came as the last run ended must not stop this one at its first node.
  if (auto ok = ortCheck(lib_, api->RunOptionsUnsetTerminate(runOptions_)); !ok) return ok;
  const auto t0 = std::chrono::steady_clock::now();
  watchdog_.arm(timeout, [api, options = runOptions_] {
    OrtStatus* s = api->RunOptionsSetTerminate(options);
    if (s != nullptr) api->ReleaseStatus(s);
  });
  OrtStatus* status = api->Run(session_, runOptions_, inNames_.data(), ins_.data(), ins_.size(),
                               outNames_.data(), outNames_.size(), outs_.data());
  const bool cut = watchdog_.disarm();
  if (!cut) return ortCheck(lib_, status);
  const auto took =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  std::string why = status == nullptr ? "it had just finished" : api->GetErrorMessage(status);
  if (status != nullptr) api->ReleaseStatus(status);
  return makeError(ErrorCode::kTimeout,
                   "the run passed its timeout of {} ms and was cut (ONNX Runtime's terminate "
                   "flag, RunOptionsSetTerminate); it returned after {} ms ({})",
                   timeout.count(), took.count(), why);
}

void OrtStageSession::release() {
  const OrtApi* api = lib_.api;
  for (Binding& b : bindings_) api->ReleaseValue(b.value);
  bindings_.clear();
  inNames_.clear();
  outNames_.clear();
  ins_.clear();
  outs_.clear();
  if (memory_ != nullptr) api->ReleaseMemoryInfo(memory_);
  memory_ = nullptr;
  if (runOptions_ != nullptr) api->ReleaseRunOptions(runOptions_);
  runOptions_ = nullptr;
  if (session_ != nullptr) api->ReleaseSession(session_);
  session_ = nullptr;
}

}  // namespace vigil
