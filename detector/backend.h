#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "detector/model_manifest.h"
#include "detector/npu/vitisai_plan.h"
#include "detector/tensor.h"
#include "foundation/error.h"

namespace vigil {

struct BackendOptions {
  int threads = 0;        // 0: the runtime's default
  bool spinning = false;  // let idle worker threads spin (cpu-ort); off: they leave the CPU
  // NPU backends also run the CPU reference of their NPU stage on every frame and record the
  // largest difference (npuStats().referenceMaxAbsDiff): `vigil bench` only, it doubles the work.
  bool compareWithReference = false;
  // cpu-ort runs YOLOX's Focus stem as one convolution (onnx_focus_stem.h); false runs the file's
  // graph node for node (tests and comparisons).
  bool fuseStem = true;
  // Where the Vitis AI runtime finds ONNX Runtime and keeps compiled models (vitisai bundles).
  VitisAiSettings vitisai;
};

// Runs a model's stages: network input in, last stage's output out.
// Ownership and threads: a backend is created and then used by one thread at a time (the
// inference worker that owns it); it owns its runtime objects and buffers, allocated at
// creation. Failure: infer() never throws; a runtime error is kBackendFailure. Checking the
// output for NaN/Inf is the caller's job (see verify.h), so it is done once for every backend.
class InferenceBackend {
 public:
  virtual ~InferenceBackend() = default;

  // The table key this backend was created under ("cpu", ...).
  virtual std::string_view name() const = 0;
  // Human description of what really runs the model, e.g. "OpenCV DNN 4.6.0 on CPU, 2 threads".
  virtual std::string device() const = 0;

  // `input` is the first stage's input; `output` receives the last stage's first output and is
  // resized on first use only.
  virtual Expected<void> infer(const Tensor& input, Tensor& output) = 0;
  // Whether infer() takes an input smaller than the manifest's: [1, 3, H, W] with H and W
  // multiples of the largest stride up to the manifest's size, its output then as many anchors
  // as that size has (a model whose input.any_size is set, on a runtime that can run it so).
  virtual bool takesAnySize() const { return false; }
  // The end of this backend's use (its owner stops): cuts the inference in flight, if the
  // runtime can, and every later one fails at once. The one call any thread may make while
  // infer() runs. Default: nothing to cut, the inference in flight ends on its own.
  virtual void interrupt() {}
};

using BackendFactory = Expected<std::unique_ptr<InferenceBackend>> (*)(const ModelManifest&,
                                                                       const BackendOptions&);

struct BackendEntry {
  std::string_view name;
  std::string_view description;
  BackendFactory create;
};

// The backends compiled into this build, in order of preference, then "auto".
std::span<const BackendEntry> backendTable();

// "cpu-ort, cpu, auto" for messages.
std::string backendNames();

// What "auto" tries for `manifest` in this build, in order, for messages: "npu, then cpu-ort,
// then cpu" for a bundle with an NPU stage, "cpu-ort, then cpu" for a plain model.
std::string autoBackendOrder(const ModelManifest& manifest);

// Creates the backend registered under `name`; an unknown name is kInvalidArgument naming the
// backends this build has. "auto" creates the first backend of the table that loads; when one
// before it failed, `autoReason` (if given) receives why, for the caller to log at warn.
Expected<std::unique_ptr<InferenceBackend>> createBackend(std::string_view name,
                                                          const ModelManifest& manifest,
                                                          const BackendOptions& options,
                                                          std::string* autoReason = nullptr);

// The first CPU backend of the table that loads (cpu-ort, then the cpu reference): what "auto"
// falls back to. `reason` (if given) receives why the ones before it failed.
Expected<std::unique_ptr<InferenceBackend>> createCpuBackend(const ModelManifest& manifest,
                                                             const BackendOptions& options,
                                                             std::string* reason = nullptr);

}  // namespace vigil
