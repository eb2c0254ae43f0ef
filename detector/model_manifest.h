#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "foundation/error.h"

namespace vigil {

// The model manifest (model.yaml): the contract between a model's files and the code that runs
// them. See models/yolox-nano/model.yaml for the documented format.

struct AcceptedVariant {
  std::string sha256;  // lower-case hex
  std::uint64_t size = 0;
  std::string origin;
};

struct ModelFile {
  std::string name;  // relative to the manifest's directory
  std::string url;   // where fetch-model downloads it; may be empty
  std::vector<AcceptedVariant> accepted;
};

// The largest dimension a manifest's tensor shape may have (beyond it: a typing error).
constexpr std::int64_t kMaxTensorDim = 1 << 20;

struct TensorSpec {
  std::string name;
  std::vector<std::int64_t> shape;
  std::string layout;  // e.g. NCHW, NHWC, anchors-by-channels
  std::string dtype;   // float32 (others arrive with the NPU bundles)

  std::int64_t elementCount() const;
};

// A tensor as an NPU stage reads or writes it in its buffer: the ONNX tensor of the same name
// in `layout`, `dtype` (float32, bf16, int8, uint8) and, for the integer types, quantized as
// q = round(x / scale) + zeroPoint. Layouts and their `shape`:
//   NCHW   [N, C, H, W];
//   NHWC   [N, H, W, C];
//   YCXC8  [N, C, H, W] (the ONNX shape), stored as mlir-aie's conv2d activations: for each row
//          y, for each block of 8 channels, for each x, the block's 8 channels; C is padded up to
//          a multiple of 8 with zero bytes (3 channels take 8).
struct DeviceTensorSpec {
  std::string name;
  std::vector<std::int64_t> shape;
  std::string layout;
  std::string dtype;
  float scale = 1.0F;
  int zeroPoint = 0;

  std::int64_t elementCount() const;
  // The elements the buffer holds: elementCount() and YCXC8's padding channels.
  std::int64_t storedCount() const;
  std::size_t elementBytes() const;
  std::size_t byteSize() const { return static_cast<std::size_t>(storedCount()) * elementBytes(); }
};

// What an argument of the NPU kernel carries (the mlir-aie ABI: opcode, instruction buffer,
// instruction word count, then data buffers; the manifest says which, never the code). The
// instruction count is the instructions file's size / 4 (xclbin+insts), 0 in the ELF flows.
// Weights: a buffer filled from a manifest file as it is (mlir-aie's conv2d, bottleneck and
// yolo26n designs take their weights so).
enum class NpuArgRole {
  kOpcode,
  kInstructions,
  kInstructionCount,
  kInput,
  kOutput,
  kWeights,
  kScratch
};

struct NpuArgument {
  int index = 0;
  NpuArgRole role = NpuArgRole::kOpcode;
  std::uint64_t value = 0;  // kOpcode
  std::uint64_t bytes = 0;  // buffers; kWeights: the size its file is listed with
  std::string tensor;       // kInput, kOutput: a DeviceTensorSpec name
  std::string file;         // kWeights: a manifest file
};

// The amdxdna driver declares a run hung after tdr_timeout_ms=2000 and resets the device, which
// destroys the run's hardware context. A run timeout must be above it, so that a slow run ends
// by the driver's verdict and not by a wait that gave up while the driver still waited.
inline constexpr int kDriverHangTimeoutMs = 2000;

// How a stage runs on an AMD NPU. Two runtimes:
//  - "xrt": a precompiled design (xclbin, instructions) driven through XRT, never compiled here;
//  - "vitisai": the stage's ONNX file compiled for the NPU at load by ONNX Runtime's Vitis AI
//    execution provider (AMD's Ryzen AI Software); its tensors are the stage's, float32, and
//    its arguments are made by the reader (inputs, then outputs, in order).
struct NpuStageSpec {
  std::string runtime = "xrt";  // "xrt" or "vitisai"
  std::string target;           // npu1 (XDNA) or npu2 (XDNA2); vitisai: chosen from the device
  // vitisai only: "bf16" (a float model, XDNA2 only) or "int8" (a QDQ model); the BF16 compiler
  // settings (a manifest file, may be empty); the fewest nodes the EP must place on the NPU.
  std::string compiler;
  std::string model;  // vitisai: the stage's ONNX file
  std::string configFile;
  int minNpuNodes = 1;
  std::string flow;     // xclbin+insts, xclbin+elf or full-elf
  int minXrtMajor = 2;  // min_xrt_version "major.minor"
  int minXrtMinor = 0;
  std::string xclbin;             // a manifest file (flows with an xclbin)
  std::string instructions;       // a manifest file: insts.bin, or the ELF of the ELF flows
  std::string kernel;             // kernel name: an xclbin prefix; full-elf: the ELF's, exact
  int timeoutMs = 5000;           // per run; above kDriverHangTimeoutMs
  float canaryTolerance = 1e-3F;  // max abs difference, dequantized
  int canaryIntervalS = 600;      // 0: only at start
  std::vector<NpuArgument> arguments;
  std::vector<DeviceTensorSpec> inputs;
  std::vector<DeviceTensorSpec> outputs;
  std::string canaryInput;     // a manifest file: the inputs in device format
  std::string canaryExpected;  // a manifest file: the outputs in device format; may be empty
  // vitisai: a manifest file, a photograph letterboxed into the canary input (instead of
  // canaryInput); the expected output is the CPU reference's.
  std::string canaryImage;

  const NpuArgument* argumentFor(NpuArgRole role) const;
};

struct StageSpec {
  std::string name;
  std::string runtime;  // "onnx": a CPU backend runs it
  std::string file;     // one of the manifest's files
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  // Present when the stage can run on the NPU; `file` stays its CPU reference (same partition).
  std::optional<NpuStageSpec> npu;
};

enum class ChannelOrder { kBgr, kRgb };

struct InputSpec {
  int width = 0;
  int height = 0;
  ChannelOrder channelOrder = ChannelOrder::kBgr;
  float valueMin = 0;
  float valueMax = 255;
  int padValue = 114;  // letterbox: top-left anchor, the only rule YOLOX uses
  // The graph runs at any size that is a multiple of the largest stride, up to width x height
  // (YOLOX's: its Resize takes scales, its Reshapes -1): a backend that can feed it so
  // (InferenceBackend::takesAnySize) pads a picture only to that multiple, not to the square.
  bool anySize = false;
};

struct PostprocessSpec {
  std::string type;  // "yolox"
  std::vector<int> strides;
  bool scoresActivated = true;
  float defaultMinScore = 0.3F;
  float defaultNmsIou = 0.45F;
  std::vector<std::string> defaultClasses;
  std::vector<std::string> classNames;

  // Index of a class name, or -1.
  int classIndex(std::string_view name) const;
  // The largest stride (YOLOX: 32): a graph that takes any size takes its multiples; 0 without
  // strides.
  int largestStride() const;
};

// How a model was made from a float one (model.yaml `quantization`, written by
// scripts/quantize-model.py): a record, checked for form; the files' sha256 are in `files`.
struct CalibrationSource {
  std::string file;
  std::string sha256;
  std::size_t frames = 0;  // how many of its frames (1 for an image)
};

struct QuantizationSpec {
  std::string preset;     // float (the BF16 flow's float part), xint8, a8w8, a16w8
  std::string precision;  // e.g. "int8 weights, uint8 activations"
  std::string sourceFile;
  std::string sourceSha256;
  std::string weights;
  std::string activations;
  std::vector<std::string> methods;
  std::vector<CalibrationSource> calibration;  // empty for float

  // True when the weights are integers behind QuantizeLinear/DequantizeLinear (QDQ), which
  // OpenCV DNN 4.6 cannot load.
  bool isInteger() const { return preset != "float"; }
};

// The float model an NPU bundle was made from, which the CPU runs instead of the bundle's own
// stages when `auto` cannot use the NPU (model.yaml `cpu_twin`): on a CPU a QDQ model is slower
// than the float one it came from (models/README.md). `model` is a model directory relative to
// the bundle's; `sha256` pins its one ONNX file. The manifest checks the form (and that `sha256`
// is quantization.source_model's); loadCpuTwin (npu/cpu_twin.h) checks the twin itself.
struct CpuTwinSpec {
  std::string model;
  std::string sha256;  // lower-case hex
};

struct ModelManifest {
  std::filesystem::path manifestPath;  // the model.yaml it was read from
  int schema = 1;
  std::string name;
  std::string description;
  std::string license;
  std::vector<ModelFile> files;
  InputSpec input;
  std::vector<StageSpec> stages;
  PostprocessSpec postprocess;
  std::optional<QuantizationSpec> quantization;
  std::optional<CpuTwinSpec> cpuTwin;

  std::filesystem::path directory() const { return manifestPath.parent_path(); }
  const ModelFile* findFile(std::string_view fileName) const;
  // The stage with an NPU section, or null.
  const StageSpec* npuStage() const;
};

// Reads and checks a manifest. `path` is a model.yaml or a directory holding one. Errors say
// file:line:col, the key path and the reason.
Expected<ModelManifest> loadModelManifest(const std::filesystem::path& path);

struct FileCheck {
  std::filesystem::path path;
  std::string sha256;
  std::uint64_t size = 0;
  const AcceptedVariant* variant = nullptr;  // null: not listed (only with allowUnverified)
};

// Hashes a model file and checks it against the manifest's accepted variants. A file that is
// not listed is an kUnverifiedModel error unless allowUnverified, in which case the check
// succeeds with variant == nullptr and the caller must say so loudly.
Expected<FileCheck> verifyModelFile(const ModelManifest& manifest, const ModelFile& file,
                                    bool allowUnverified);

// sha256 of a file's content, lower-case hex.
Expected<std::string> sha256File(const std::filesystem::path& path);

}  // namespace vigil
