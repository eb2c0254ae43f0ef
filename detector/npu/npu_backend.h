#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "detector/backend.h"
#include "detector/npu/npu_runtime.h"
#include "detector/npu/npu_stats.h"

namespace vigil {

// The NPU backend: the manifest's NPU stage on an NpuRuntime (XRT), the stages after it on the
// CPU reference (OnnxStage), decode and NMS as for every backend (in Detector).
//
// Trust: at creation a canary run (the bundle's canary input) is compared with the bundle's
// expected output and with the CPU reference of the same stage: finite, max abs difference
// within the manifest's canary_tolerance; the canary is repeated every canary_interval_s, and
// every frame's NPU output is scanned for NaN/Inf.
// Recovery ladder on a run error or timeout: retry the run, recreate the context (unload, load,
// allocate), reopen the device; when all fail the frame fails with kUnavailable. A timeout skips
// the retry: the driver's reset after a hung run destroyed the context. A new context or device
// runs the canary before the frame; wrong numbers there end the climb (`auto`: canary_failed).
//
// Policies (the backend table keys):
//   npu  - creation fails when the NPU is missing or the canary fails; a frame that fails is an
//          error, never silently answered by the CPU.
//   auto - the CPU reference answers whenever the NPU cannot, loudly: an error log line,
//          npuStats().fallbacks[reason], state(); the NPU is tried again after retryAfter.
//          The CPU runs the bundle's CPU twin when it names one that checks (npu/cpu_twin.h).
struct NpuBackendConfig {
  NpuRuntimeFactory runtimeFactory;  // default: defaultNpuRuntimeFactory() for the stage
  VitisAiSettings vitisai;           // for the vitisai runtime, from BackendOptions
  std::chrono::seconds retryAfter{300};
  std::function<std::chrono::steady_clock::time_point()> now = std::chrono::steady_clock::now;
  bool compareWithReference = false;  // set from BackendOptions by the create functions
};

// The runtime this build drives the stage's NPU with: for runtime xrt, XRT when built with
// VIGIL_WITH_XRT (under XCL_EMULATION_MODE=noop with VIGIL_NOOP_REPLAY_DIR it replays recorded
// outputs, see README); for vitisai, ONNX Runtime's Vitis AI EP when built with ONNX Runtime's
// headers; otherwise null.
NpuRuntimeFactory defaultNpuRuntimeFactory(const NpuStageSpec& spec,
                                           const VitisAiSettings& vitisai);

// A vitisai stage on ONNX Runtime's CPU provider behind the runtime seam (ort_cpu_runtime.h:
// nothing runs on an NPU; the tests of the run timeout), or null in a build without ONNX
// Runtime's headers.
NpuRuntimeFactory ortCpuStageRuntimeFactory(const VitisAiSettings& settings);

Expected<std::unique_ptr<InferenceBackend>> createNpuBackend(const ModelManifest& manifest,
                                                             const BackendOptions& options,
                                                             const NpuBackendConfig& config);
Expected<std::unique_ptr<InferenceBackend>> createAutoBackend(const ModelManifest& manifest,
                                                              const BackendOptions& options,
                                                              const NpuBackendConfig& config);

// What an `auto` backend made by createAutoBackend answers with on each side, fixed at its
// creation so any thread may read it; npuStats().npuActive says which side answers now.
struct AutoBackendSides {
  std::string npuDevice;  // "npu2 NPU via XRT 2.13 ..., CPU stages on OpenCV DNN"
  std::string cpuName;    // the CPU backend it falls back to: "cpu-ort" or "cpu"
  std::string cpuDevice;
};
// nullopt unless `backend` was made by createAutoBackend.
std::optional<AutoBackendSides> autoBackendSides(const InferenceBackend& backend);

// The Vitis AI runtime's state for `vigil doctor` (see probeVitisAi in vitisai_runtime.h);
// kUnsupported in a build without ONNX Runtime's headers.
Expected<std::string> vitisAiRuntimeState(const VitisAiSettings& settings);

// The backend-table factories (default config).
Expected<std::unique_ptr<InferenceBackend>> createNpuBackendDefault(const ModelManifest& manifest,
                                                                    const BackendOptions& options);
Expected<std::unique_ptr<InferenceBackend>> createAutoBackendDefault(const ModelManifest& manifest,
                                                                     const BackendOptions& options);

// Wraps a runtime so that, before each run, the output buffers are filled from
// `directory/<fnv1a-64 of the input buffers, hex>.bin` when that file exists (the outputs in
// device format, in argument order). Only for XRT's noop shim, where nothing computes: tests
// replay recorded outputs of the real model through the real XRT plumbing.
std::unique_ptr<NpuRuntime> makeReplayRuntime(std::unique_ptr<NpuRuntime> inner,
                                              std::filesystem::path directory,
                                              const NpuStageSpec& spec);

// FNV-1a 64 of the concatenated input buffers, as the replay file name uses it.
std::uint64_t replayKey(std::span<const std::span<const std::byte>> inputs);

}  // namespace vigil
