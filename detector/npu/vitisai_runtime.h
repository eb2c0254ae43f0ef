#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>

#include "detector/npu/npu_runtime.h"
#include "detector/npu/vitisai_plan.h"

namespace vigil {

// The NPU stage on ONNX Runtime's Vitis AI execution provider (AMD's Ryzen AI Software), behind
// the same NpuRuntime seam as XRT so canary, NaN scan, recovery ladder and `auto` apply alike.
//
// openDevice(): loads ONNX Runtime (ort_library.h), refuses (kUnsupported, saying what to
//   install and which config key points at it) when it has no Vitis AI EP, plans the options
//   for this NPU (vitisai_plan.h).
// load(): one session per process (RyzenAI-SW#402: a second one turns the first's outputs to
//   NaN); strict placement (session.disable_cpu_ep_fallback=1), the compiled model written to
//   cache_dir/cache_key (a first compile is logged with its duration, a reuse as a reuse), the
//   EP's operator report read back: no node on the NPU, or fewer than min_npu_nodes, is
//   kNotOnNpu, and the counts go to npuStats().
// start(): nothing (ONNX Runtime's Run is synchronous); wait(timeout) runs the session, cut by
//   its watchdog when it passes `timeout` (kTimeout, ort_stage_session.h), and checks, through
//   the amdxdna busy time (npu_busy_time.h), that the NPU did the work: flat is kNotOnNpu.
// Threads: one caller, like every NpuRuntime.
std::unique_ptr<NpuRuntime> makeVitisAiRuntime(VitisAiSettings settings);

// `vigil npu compile`: the bundle's Vitis AI stage compiled once into an EP-context model under
// the cache key (vitisAiContextModel), with its operator report beside it, so that the daemon
// loads it instead of compiling at its first start. Refused like a session (no Vitis AI EP, no
// node on the NPU, a session already open in this process).
struct VitisAiContextMade {
  std::filesystem::path file;
  double seconds = 0;         // the compile
  std::int64_t npuNodes = 0;  // of the operator report
};
Expected<VitisAiContextMade> compileVitisAiContext(const ModelManifest& bundle,
                                                   VitisAiSettings settings);

// "ONNX Runtime 1.23.3 (/opt/.../libonnxruntime.so) with the Vitis AI EP", or why not (the
// library does not load, its API is too old, it has no Vitis AI EP): for `vigil doctor`.
Expected<std::string> probeVitisAi(const VitisAiSettings& settings);

}  // namespace vigil
