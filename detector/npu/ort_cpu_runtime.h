#pragma once

#include <memory>

#include "detector/npu/npu_runtime.h"
#include "detector/npu/vitisai_plan.h"

namespace vigil {

// A vitisai stage on ONNX Runtime's CPU execution provider, behind the NPU runtime seam: the same
// library loading (settings.onnxRuntime), session, buffers, runs and run watchdog
// (ort_stage_session.h) as the Vitis AI runtime, without the EP, its compile cache, its operator
// report and the busy-time check. NOTHING RUNS ON AN NPU: it exists so that the timeout, the
// recovery ladder and `auto`'s fallback are tested with a real runtime on a machine without the
// Vitis AI EP (tests/tools/make_slow_stage.py makes a stage slow on purpose). One intra-op thread.
std::unique_ptr<NpuRuntime> makeOrtCpuStageRuntime(VitisAiSettings settings);

}  // namespace vigil
