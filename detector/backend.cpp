#include "detector/backend.h"

#include <array>

#include "detector/backends/opencv_backend.h"
#ifdef VIGIL_WITH_ORT
#include "detector/backends/ort_backend.h"
#endif

namespace vigil {

namespace {

Expected<std::unique_ptr<InferenceBackend>> createFirstThatLoads(const ModelManifest& manifest,
                                                                 const BackendOptions& options,
                                                                 std::string* reason);

Expected<std::unique_ptr<InferenceBackend>> createAutoBackend(const ModelManifest& manifest,
                                                              const BackendOptions& options) {
  return createFirstThatLoads(manifest, options, nullptr);
}

// In order of preference: "auto" takes the first that loads.
const std::array kBackends{
#ifdef VIGIL_WITH_ORT
    BackendEntry{"cpu-ort", "ONNX Runtime on the CPU", &createOrtBackend},
#endif
    BackendEntry{"cpu", "OpenCV DNN on the CPU (reference, always built)", &createOpenCvBackend},
    BackendEntry{"auto", "the first of the above that loads", &createAutoBackend},
};

Expected<std::unique_ptr<InferenceBackend>> createFirstThatLoads(const ModelManifest& manifest,
                                                                 const BackendOptions& options,
                                                                 std::string* reason) {
  std::string reasons;
  for (const BackendEntry& e : kBackends) {
    if (e.name == "auto") break;
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

}  // namespace

std::span<const BackendEntry> backendTable() { return kBackends; }

std::string backendNames() {
  std::string names;
  for (const BackendEntry& e : kBackends) {
    names += names.empty() ? "" : ", ";
    names += e.name;
  }
  return names;
}

Expected<std::unique_ptr<InferenceBackend>> createBackend(std::string_view name,
                                                          const ModelManifest& manifest,
                                                          const BackendOptions& options,
                                                          std::string* autoReason) {
  if (name == "auto") return createFirstThatLoads(manifest, options, autoReason);
  for (const BackendEntry& e : kBackends) {
    if (e.name == name) return e.create(manifest, options);
  }
  return makeError(ErrorCode::kInvalidArgument, "unknown backend '{}' (this build has: {})", name,
                   backendNames());
}

}  // namespace vigil
