#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "detector/model_manifest.h"
#include "foundation/error.h"

namespace vigil {

// The seam between the NPU backend and the runtime that drives the device: XRT in production
// (xrt_runtime.h), a fault-injecting double in tests. The calls mirror XRT's life cycle so the
// backend's recovery ladder can undo and redo each level: device, then design/context/kernel,
// then buffers.
//
// Ownership and threads: the backend owns its runtime and calls it from one thread (the
// inference worker). Buffers returned by buffer() stay valid until unload() or closeDevice().
// Failure: no call throws; errors carry the cause in words (kUnavailable: device missing or
// gone, kUnsupported: this build/XRT cannot run the bundle, kBackendFailure: a run failed,
// kTimeout: a run did not finish in time).
class NpuRuntime {
 public:
  virtual ~NpuRuntime() = default;

  // "XRT 2.13 (legacy load_xclbin API), device 0" and the like, for logs and status.
  virtual std::string describe() const = 0;

  virtual Expected<void> openDevice() = 0;
  // Loads the stage's design (xclbin / ELF from `directory`), creates the hardware context and
  // finds the kernel.
  virtual Expected<void> load(const NpuStageSpec& spec, const std::filesystem::path& directory) = 0;
  // Allocates one buffer per buffer argument of the loaded kernel, fills each as
  // initialContentOf() says and syncs the filled ones to the device, and binds every argument;
  // called once after each load().
  virtual Expected<void> allocate() = 0;
  // The mapped host view of argument `argIndex`'s buffer (empty if it has none).
  virtual std::span<std::byte> buffer(int argIndex) = 0;
  // Syncs inputs to the device and starts one run.
  virtual Expected<void> start() = 0;
  // Waits for the run started last, at most `timeout`, then syncs outputs back.
  virtual Expected<void> wait(std::chrono::milliseconds timeout) = 0;
  // Drops run, buffers, kernel and hardware context (the device stays open).
  virtual void unload() = 0;
  virtual void closeDevice() = 0;
};

using NpuRuntimeFactory = std::function<std::unique_ptr<NpuRuntime>()>;

// What NpuRuntime::allocate() writes into an argument's buffer and syncs to the device before
// the first run, as mlir-aie's host code prepares its buffers.
enum class InitialContent {
  kNone,          // no buffer (a scalar), or an input, which start() syncs before each run
  kInstructions,  // the instruction stream (xclbin+insts)
  kWeights,       // the argument's weights file
  kZeros,         // outputs and scratch: nothing stale from an earlier context on either side
};

inline InitialContent initialContentOf(NpuArgRole role) {
  switch (role) {
    case NpuArgRole::kInstructions:
      return InitialContent::kInstructions;
    case NpuArgRole::kWeights:
      return InitialContent::kWeights;
    case NpuArgRole::kOutput:
    case NpuArgRole::kScratch:
      return InitialContent::kZeros;
    case NpuArgRole::kOpcode:
    case NpuArgRole::kInstructionCount:
    case NpuArgRole::kInput:
      break;
  }
  return InitialContent::kNone;
}

}  // namespace vigil
