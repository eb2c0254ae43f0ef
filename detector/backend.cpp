#include "detector/backend.h"

#include <array>

#include "detector/backends/opencv_backend.h"
#include "detector/cpu_stage.h"
#ifdef VIGIL_WITH_ORT
#include "detector/backends/ort_backend.h"
#endif
#include "detector/npu/npu_backend.h"

// An NPU runtime is built when either XRT or ONNX Runtime's headers (the Vitis AI EP) are.
#if defined(VIGIL_WITH_XRT) || defined(VIGIL_WITH_ORT)
#define VIGIL_WITH_NPU_RUNTIME 1
#endif

namespace vigil {

namespace {

// "auto": with a bundle that has an NPU stage, the NPU with the CPU answering (loudly) whenever
// it cannot; otherwise the best CPU backend. `reason` as for createCpuBackend.
Expected<std::unique_ptr<InferenceBackend>> createAuto(const ModelManifest& manifest,
                                                       const BackendOptions& options,
                                                       std::string* reason) {
#ifdef VIGIL_WITH_NPU_RUNTIME
  if (manifest.npuStage() != nullptr) return createAutoBackendDefault(manifest, options);
#endif
  return createCpuBackend(manifest, options, reason);
}

Expected<std::unique_ptr<InferenceBackend>> createAutoEntry(const ModelManifest& manifest,
                                                            const BackendOptions& options) {
  return createAuto(manifest, options, nullptr);
}

// In order of preference: "auto" takes the first that loads.
const std::array kBackends{
#ifdef VIGIL_WITH_NPU_RUNTIME
    BackendEntry{"npu",
                 "the model bundle's NPU stage through XRT or ONNX Runtime's Vitis AI EP; fails "
                 "when the NPU cannot run it",
                 &createNpuBackendDefault},
#endif
#ifdef VIGIL_WITH_ORT
    BackendEntry{"cpu-ort", "ONNX Runtime on the CPU", &createOrtBackend},
#endif
    BackendEntry{"cpu", "OpenCV DNN on the CPU (reference, always built)", &createOpenCvBackend},
    BackendEntry{"auto",
                 "with an NPU bundle the NPU while it passes its canary, else the best CPU "
                 "backend, loudly; otherwise the first CPU backend that loads",
                 &createAutoEntry},
};

}  // namespace

std::span<const BackendEntry> backendTable() { return kBackends; }

Expected<std::unique_ptr<InferenceBackend>> createCpuBackend(const ModelManifest& manifest,
                                                             const BackendOptions& options,
                                                             std::string* reason) {
  std::string reasons;
  for (const BackendEntry& e : kBackends) {
    if (e.name == "auto") break;
    if (e.name == "npu") continue;  // the NPU only through createAuto's bundle check
    auto backend = e.create(manifest, options);
    if (backend) {
      if (reason != nullptr) *reason = reasons;
      return backend;
    }
    reasons += fmt::format("{}{} failed: {}", reasons.empty() ? "" : "; ", e.name,
                           backend.error().message);
  }
  return makeError(ErrorCode::kUnsupported, "auto: no backend loads: {}", reasons);
}

Expected<std::unique_ptr<CpuStage>> loadCpuStage(const ModelManifest& manifest,
                                                 const StageSpec& stage) {
  const std::filesystem::path file = manifest.directory() / stage.file;
  if (manifest.quantization && manifest.quantization->isInteger()) {
#ifdef VIGIL_WITH_ORT
    return loadOrtStage(file, stage);
#else
    return makeError(ErrorCode::kUnsupported,
                     "{}: an integer (QDQ) model needs ONNX Runtime on the CPU, which this build "
                     "lacks (OpenCV DNN cannot load it)",
                     file.string());
#endif
  }
  auto reference = OnnxStage::load(file, stage);
  if (!reference) return tl::unexpected(reference.error());
  return std::unique_ptr<CpuStage>(std::move(*reference));
}

std::string backendNames() {
  std::string names;
  for (const BackendEntry& e : kBackends) {
    names += names.empty() ? "" : ", ";
    names += e.name;
  }
  return names;
}

std::string autoBackendOrder(const ModelManifest& manifest) {
  std::string order;
  for (const BackendEntry& e : kBackends) {
    if (e.name == "auto") break;
    if (e.name == "npu" && manifest.npuStage() == nullptr) continue;
    order += order.empty() ? "" : ", then ";
    order += e.name;
  }
  return order;
}

Expected<std::unique_ptr<InferenceBackend>> createBackend(std::string_view name,
                                                          const ModelManifest& manifest,
                                                          const BackendOptions& options,
                                                          std::string* autoReason) {
  if (name == "auto") return createAuto(manifest, options, autoReason);
  for (const BackendEntry& e : kBackends) {
    if (e.name == name) return e.create(manifest, options);
  }
  return makeError(ErrorCode::kInvalidArgument, "unknown backend '{}' (this build has: {})", name,
                   backendNames());
}

}  // namespace vigil
