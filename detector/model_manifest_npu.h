#pragma once

#include <string>

#include "detector/model_manifest.h"
#include "foundation/yaml_reader.h"

// Reading a stage's `npu` section of model.yaml (loadModelManifest's part for the NPU routes).
// Errors are the YamlReader's, at the key's file:line:col.
namespace vigil::manifest_npu {

// The XRT route's section at `path` of `stage`: target, flow, xclbin, instructions, kernel and
// its arguments, the device tensors, the canary. Every tensor of the section must be one of the
// stage's ONNX tensors with the same element count, and every data buffer must have exactly one
// argument whose byte size matches, so a bundle that cannot work fails here and not at the first
// frame.
NpuStageSpec readNpu(const YamlReader& r, const ModelManifest& m, const YAML::Node& node,
                     const std::string& path, const StageSpec& stage);

// The Vitis AI runtime's section: the EP compiles the stage's own ONNX file, so the tensors and
// arguments are the stage's (float32 as they are), one output only (RyzenAI-SW#369:
// multi-output NPU graphs come back wrong or NaN).
NpuStageSpec readVitisAiNpu(const YamlReader& r, const ModelManifest& m, const YAML::Node& node,
                            const std::string& path, const StageSpec& stage);

}  // namespace vigil::manifest_npu
