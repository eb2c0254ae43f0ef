#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iosfwd>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "detector/npu/vitisai_plan.h"

namespace vigil {

// `vigil npu selftest`: a field report a user with the hardware can attach to a bug report. For
// every NPU bundle the install has, it tries the `npu` backend and says what happened: the
// session's creation time (the EP's compile, or its cache), where the nodes went, the canary's
// agreement with the CPU reference, a NaN/Inf scan, whether the NPU's busy time grew, and latency
// and host CPU per inference against `cpu-ort` in alternation; or, when the NPU refuses, why.
// Plus the versions that matter (kernel, amdxdna, firmware, XRT, ONNX Runtime, the EP). Inputs
// are the bundles' own canary photographs: no camera picture, no configuration secret goes in.
// The JSON schema is documented in docs/ryzen-ai.md (section 9).
struct NpuSelftestOptions {
  // Bundle directories, or directories holding bundles; empty: the install's (the built-in
  // model's directory and /usr/share/vigil/models).
  std::vector<std::string> models;
  std::string config;       // cameras.yaml for detector.onnxruntime/vitisai; empty: installed one
  std::string onnxRuntime;  // overrides the configuration's detector.onnxruntime
  int iterations = 20;      // measured inferences per backend and bundle
  bool json = false;        // print the JSON report instead of the summary
  std::string out;          // also write the JSON report there
};

// The `npu` command group with its `selftest`; returned for the group's other commands.
CLI::App& addNpuCommand(CLI::App& app, NpuSelftestOptions& options);

// The service's Vitis AI settings: `configFile`'s detector.onnxruntime and detector.vitisai
// (empty: the installed configuration, when there is one), then `onnxRuntime` over its ONNX
// Runtime.
VitisAiSettings serviceVitisAiSettings(const std::string& configFile,
                                       const std::string& onnxRuntime);
// 0 when the report was made (a refused NPU is a finding, not an error), 2 when it cannot be
// written, 1 when no NPU bundle was found.
int runNpuSelftest(const NpuSelftestOptions& options, std::ostream& out);

// The report itself (see docs/ryzen-ai.md section 9).
nlohmann::json npuSelftestReport(const NpuSelftestOptions& options);

// The bundles with an NPU stage in `places` (each a bundle, or a directory of bundles), sorted,
// each once.
std::vector<std::filesystem::path> npuBundlesIn(const std::vector<std::filesystem::path>& places);

}  // namespace vigil
