#pragma once

#include <memory>

#include "detector/backend.h"
#include "detector/model_manifest.h"
#include "foundation/error.h"

namespace vigil {

// The CPU twin of an NPU bundle (model.yaml `cpu_twin`, see CpuTwinSpec): the float model the
// bundle was made from, which `auto` runs on the CPU while the NPU is not in use.

// Loads the twin `bundle` names and checks that it can stand in for the bundle's stages: its
// manifest loads; it is a float model of one ONNX stage, with no NPU stage; its file's sha256 is
// the one the bundle pins; it takes the same input (size, channel order, value range, letterbox)
// and gives the same output (shape, decode, classes). kNotFound when the bundle names no twin or
// the twin's manifest or file is missing; otherwise an error saying why the twin is refused.
Expected<ModelManifest> loadCpuTwin(const ModelManifest& bundle);

// The CPU side of `auto` for an NPU bundle: the first CPU backend that loads (createCpuBackend)
// on the bundle's twin when loadCpuTwin accepts it, otherwise on the bundle's own stages, with a
// warning naming the reason. For a bundle with a `cpu_twin`, device() ends with the model that
// answers: ", CPU twin yolox-nano (sha256 checked)" or ", the bundle's own stages (CPU twin
// refused)". Ownership and threads as for every backend.
Expected<std::unique_ptr<InferenceBackend>> createAutoCpuSide(const ModelManifest& bundle,
                                                              const BackendOptions& options);

}  // namespace vigil
