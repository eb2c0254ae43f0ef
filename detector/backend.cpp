#include "detector/backend.h"

#include <array>

#include "detector/backends/opencv_backend.h"
#include "detector/npu/npu_backend.h"

namespace vigil {

namespace {

const std::array kBackends{
    BackendEntry{"cpu", "OpenCV DNN on the CPU (reference, always built)", &createOpenCvBackend},
#ifdef VIGIL_WITH_XRT
    BackendEntry{"npu",
                 "the model bundle's NPU stage through XRT; fails when the NPU cannot run it",
                 &createNpuBackendDefault},
    BackendEntry{"auto", "the NPU when it runs and passes its canary, else the CPU, loudly",
                 &createAutoBackendDefault},
#endif
};

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
                                                          const BackendOptions& options) {
  for (const BackendEntry& e : kBackends) {
    if (e.name == name) return e.create(manifest, options);
  }
  return makeError(ErrorCode::kInvalidArgument, "unknown backend '{}' (this build has: {})", name,
                   backendNames());
}

}  // namespace vigil
