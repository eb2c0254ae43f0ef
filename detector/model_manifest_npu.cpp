// The `npu` section of a model manifest's stage (model_manifest.h): the XRT route's device
// tensors and kernel arguments, or the Vitis AI route's settings.
#include "detector/model_manifest_npu.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

namespace vigil::manifest_npu {

namespace {

// The NPU section of a stage. Every tensor of the section must be one of the stage's ONNX
// tensors with the same element count, and every data buffer must have exactly one argument
// whose byte size matches, so a bundle that cannot work fails here and not at the first frame.
DeviceTensorSpec readDeviceTensor(const YamlReader& r, const YAML::Node& node,
                                  const std::string& path, const std::vector<TensorSpec>& onnx) {
  r.rejectUnknownKeys(node, path, {"name", "shape", "layout", "dtype", "scale", "zero_point"});
  DeviceTensorSpec t;
  t.name = r.getString(node, path, "name");
  t.shape = r.getIntList(node, path, "shape", 1, kMaxTensorDim);
  t.layout = r.getString(node, path, "layout");
  t.dtype = r.getString(node, path, "dtype");
  const TensorSpec* ref = nullptr;
  for (const TensorSpec& o : onnx) {
    if (o.name == t.name) ref = &o;
  }
  if (ref == nullptr) {
    r.fail(node["name"], YamlReader::join(path, "name"),
           fmt::format("'{}' is not a tensor of this stage's ONNX file", t.name));
  }
  if (t.layout != "NCHW" && t.layout != "NHWC" && t.layout != "YCXC8") {
    r.fail(node["layout"], YamlReader::join(path, "layout"),
           fmt::format("must be NCHW, NHWC or YCXC8, got '{}'", t.layout));
  }
  if (t.shape.size() != 4 || ref->shape.size() != 4) {
    r.fail(node["shape"], YamlReader::join(path, "shape"), "must have 4 dimensions");
  }
  std::vector<std::int64_t> expected = ref->shape;
  if (t.layout == "NHWC") expected = {ref->shape[0], ref->shape[2], ref->shape[3], ref->shape[1]};
  if (t.shape != expected) {
    r.fail(node["shape"], YamlReader::join(path, "shape"),
           fmt::format("must be [{}] for {} of ONNX tensor '{}'", fmt::join(expected, ", "),
                       t.layout, t.name));
  }
  if (t.dtype == "int8" || t.dtype == "uint8") {
    t.scale = static_cast<float>(r.getDouble(node, path, "scale", 1e-12, 1e12));
    int lo = t.dtype == "int8" ? -128 : 0;
    int hi = t.dtype == "int8" ? 127 : 255;
    t.zeroPoint = static_cast<int>(r.getInt(node, path, "zero_point", lo, hi));
  } else if (t.dtype == "float32" || t.dtype == "bf16") {
    if (node["scale"] || node["zero_point"]) {
      r.fail(node["scale"] ? node["scale"] : node["zero_point"], path,
             fmt::format("{} is not quantized: no scale or zero_point", t.dtype));
    }
  } else {
    r.fail(node["dtype"], YamlReader::join(path, "dtype"),
           fmt::format("unsupported dtype '{}' (known: float32, bf16, int8, uint8)", t.dtype));
  }
  return t;
}

std::vector<DeviceTensorSpec> readDeviceTensors(const YamlReader& r, const YAML::Node& npu,
                                                const std::string& path, const char* key,
                                                const std::vector<TensorSpec>& onnx) {
  YAML::Node list = r.child(npu, path, key);
  std::string p = YamlReader::join(path, key);
  r.expectSequence(list, p);
  if (list.size() != onnx.size()) {
    r.fail(list, p, fmt::format("must list the stage's {} ONNX {}", onnx.size(), key));
  }
  std::vector<DeviceTensorSpec> tensors;
  for (std::size_t i = 0; i < list.size(); ++i) {
    tensors.push_back(readDeviceTensor(r, list[i], YamlReader::index(p, i), onnx));
  }
  return tensors;
}

std::string requireListedFile(const YamlReader& r, const ModelManifest& m, const YAML::Node& map,
                              const std::string& path, const char* key) {
  std::string name = r.getString(map, path, key);
  if (m.findFile(name) == nullptr) {
    r.fail(map[key], YamlReader::join(path, key),
           fmt::format("'{}' is not listed under files (every file needs its sha256)", name));
  }
  return name;
}

// A weights argument: its file (listed, so its sha256 is checked like the others') goes into
// the buffer as it is, so the buffer is as large as the file.
void readWeightsArgument(const YamlReader& r, const ModelManifest& m, const YAML::Node& a,
                         const std::string& p, NpuArgument& arg) {
  arg.role = NpuArgRole::kWeights;
  if (a["bytes"]) {
    r.fail(a["bytes"], YamlReader::join(p, "bytes"),
           "a weights buffer is as large as its file: remove bytes");
  }
  arg.file = requireListedFile(r, m, a, p, "file");
  const ModelFile& file = *m.findFile(arg.file);
  arg.bytes = file.accepted.front().size;
  for (const AcceptedVariant& v : file.accepted) {
    if (v.size != arg.bytes) {
      r.fail(a["file"], YamlReader::join(p, "file"),
             fmt::format("the accepted variants of '{}' differ in size ({} and {} bytes); a "
                         "weights buffer has one size",
                         arg.file, arg.bytes, v.size));
    }
  }
}

// An input or output argument: bound to one of the section's device tensors, which no other
// argument binds, at that tensor's size. `bound`: the tensors bound so far.
void readTensorArgument(const YamlReader& r, const NpuStageSpec& n, const YAML::Node& a,
                        const std::string& p, const std::string& role, NpuArgument& arg,
                        std::vector<std::string>& bound) {
  arg.role = role == "input" ? NpuArgRole::kInput : NpuArgRole::kOutput;
  arg.tensor = r.getString(a, p, "tensor");
  arg.bytes = static_cast<std::uint64_t>(r.getInt(a, p, "bytes", 1, std::int64_t{1} << 32));
  const auto& list = role == "input" ? n.inputs : n.outputs;
  const DeviceTensorSpec* t = nullptr;
  for (const DeviceTensorSpec& d : list) {
    if (d.name == arg.tensor) t = &d;
  }
  if (t == nullptr) {
    r.fail(a["tensor"], YamlReader::join(p, "tensor"),
           fmt::format("'{}' is not one of the npu {}s", arg.tensor, role));
  }
  if (std::find(bound.begin(), bound.end(), arg.tensor) != bound.end()) {
    r.fail(a["tensor"], YamlReader::join(p, "tensor"),
           fmt::format("'{}' is bound to two arguments", arg.tensor));
  }
  bound.push_back(arg.tensor);
  if (arg.bytes != t->byteSize()) {
    r.fail(a["bytes"], YamlReader::join(p, "bytes"),
           fmt::format("'{}' is {} bytes as {} {} {}, got {}", arg.tensor, t->byteSize(), t->dtype,
                       t->layout, fmt::join(t->shape, "x"), arg.bytes));
  }
}

// One entry of an npu section's `arguments`, at `p`, by its role.
NpuArgument readNpuArgument(const YamlReader& r, const ModelManifest& m, const NpuStageSpec& n,
                            const YAML::Node& a, const std::string& p,
                            std::vector<std::string>& bound) {
  r.rejectUnknownKeys(a, p, {"index", "role", "value", "bytes", "tensor", "file"});
  NpuArgument arg;
  arg.index = static_cast<int>(r.getInt(a, p, "index", 0, 63));
  for (const NpuArgument& other : n.arguments) {
    if (other.index == arg.index) {
      r.fail(a["index"], YamlReader::join(p, "index"),
             fmt::format("argument {} is listed twice", arg.index));
    }
  }
  std::string role = r.getString(a, p, "role");
  if (role == "opcode") {
    arg.role = NpuArgRole::kOpcode;
    arg.value = static_cast<std::uint64_t>(r.getInt(a, p, "value", 0, 1 << 30));
  } else if (role == "instructions") {
    arg.role = NpuArgRole::kInstructions;
    if (n.flow == "xclbin+insts") {
      arg.bytes = static_cast<std::uint64_t>(r.getInt(a, p, "bytes", 4, std::int64_t{1} << 30));
    } else if (a["bytes"]) {
      // The ELF flows keep the kernel's instruction slot but pass 0 in it.
      r.fail(a["bytes"], YamlReader::join(p, "bytes"),
             fmt::format("flow {} has no instruction buffer (the instructions are in the ELF "
                         "and this argument is passed 0): remove bytes",
                         n.flow));
    }
  } else if (role == "instruction_count") {
    arg.role = NpuArgRole::kInstructionCount;
    if (a["value"]) {
      r.fail(a["value"], YamlReader::join(p, "value"),
             "the instruction count is derived from the instructions file now (its size / 4; "
             "0 in the ELF flows): remove value");
    }
  } else if (role == "input" || role == "output") {
    readTensorArgument(r, n, a, p, role, arg, bound);
  } else if (role == "weights") {
    readWeightsArgument(r, m, a, p, arg);
  } else if (role == "scratch") {
    arg.role = NpuArgRole::kScratch;
    arg.bytes = static_cast<std::uint64_t>(r.getInt(a, p, "bytes", 1, std::int64_t{1} << 32));
  } else {
    r.fail(a["role"], YamlReader::join(p, "role"),
           fmt::format("unknown role '{}' (known: opcode, instructions, instruction_count, "
                       "input, output, weights, scratch)",
                       role));
  }
  return arg;
}

// An npu section's `arguments`: each one's role, every device tensor bound exactly once.
void readNpuArguments(const YamlReader& r, const ModelManifest& m, const YAML::Node& node,
                      const std::string& path, NpuStageSpec& n) {
  YAML::Node args = r.child(node, path, "arguments");
  std::string ap = YamlReader::join(path, "arguments");
  r.expectSequence(args, ap);
  std::vector<std::string> bound;
  for (std::size_t i = 0; i < args.size(); ++i) {
    n.arguments.push_back(readNpuArgument(r, m, n, args[i], YamlReader::index(ap, i), bound));
  }
  if (bound.size() != n.inputs.size() + n.outputs.size()) {
    r.fail(args, ap, "every npu input and output needs exactly one argument");
  }
}

}  // namespace

NpuStageSpec readNpu(const YamlReader& r, const ModelManifest& m, const YAML::Node& node,
                     const std::string& path, const StageSpec& stage) {
  r.rejectUnknownKeys(node, path,
                      {"runtime", "target", "flow", "min_xrt_version", "xclbin", "instructions",
                       "kernel", "timeout_ms", "canary_tolerance", "canary_interval_s", "arguments",
                       "inputs", "outputs", "canary"});
  NpuStageSpec n;
  n.target = r.getString(node, path, "target");
  if (n.target != "npu1" && n.target != "npu2") {
    r.fail(node["target"], YamlReader::join(path, "target"),
           fmt::format("must be npu1 (XDNA) or npu2 (XDNA2), got '{}'", n.target));
  }
  n.flow = r.getString(node, path, "flow");
  if (n.flow != "xclbin+insts" && n.flow != "xclbin+elf" && n.flow != "full-elf") {
    r.fail(node["flow"], YamlReader::join(path, "flow"),
           fmt::format("must be xclbin+insts, xclbin+elf or full-elf, got '{}'", n.flow));
  }
  std::string version = r.getString(node, path, "min_xrt_version");
  if (std::sscanf(version.c_str(), "%d.%d", &n.minXrtMajor, &n.minXrtMinor) != 2 ||
      n.minXrtMajor < 2) {
    r.fail(node["min_xrt_version"], YamlReader::join(path, "min_xrt_version"),
           fmt::format("must be major.minor such as 2.17, got '{}'", version));
  }
  // full-elf: the ELF carries the design (PDIs) too; an xclbin beside it would be ignored.
  if (n.flow == "full-elf") {
    if (node["xclbin"]) {
      r.fail(node["xclbin"], YamlReader::join(path, "xclbin"),
             "flow full-elf takes no xclbin: the ELF carries the whole design");
    }
  } else {
    n.xclbin = requireListedFile(r, m, node, path, "xclbin");
  }
  // xclbin+insts: the instruction stream (insts.bin); the ELF flows: the ELF.
  n.instructions = requireListedFile(r, m, node, path, "instructions");
  n.kernel = r.getString(node, path, "kernel");
  n.timeoutMs = static_cast<int>(r.getInt(node, path, "timeout_ms", 1, 600000, n.timeoutMs));
  if (n.timeoutMs <= kDriverHangTimeoutMs) {
    r.fail(node["timeout_ms"], YamlReader::join(path, "timeout_ms"),
           fmt::format("must be above {} (the amdxdna driver's hang timeout, tdr_timeout_ms): a "
                       "shorter wait gives up on a run the driver still waits for, got {}",
                       kDriverHangTimeoutMs, n.timeoutMs));
  }
  n.canaryTolerance = static_cast<float>(r.getDouble(node, path, "canary_tolerance", 0, 1e6, 1e-3));
  n.canaryIntervalS =
      static_cast<int>(r.getInt(node, path, "canary_interval_s", 0, 86400 * 7, 600));
  n.inputs = readDeviceTensors(r, node, path, "inputs", stage.inputs);
  n.outputs = readDeviceTensors(r, node, path, "outputs", stage.outputs);

  readNpuArguments(r, m, node, path, n);

  YAML::Node canary = r.child(node, path, "canary");
  std::string cp = YamlReader::join(path, "canary");
  r.rejectUnknownKeys(canary, cp, {"input", "expected"});
  n.canaryInput = requireListedFile(r, m, canary, cp, "input");
  if (canary["expected"]) n.canaryExpected = requireListedFile(r, m, canary, cp, "expected");
  return n;
}

// The Vitis AI runtime's npu section: the EP compiles the stage's own ONNX file, so the
// tensors and arguments are the stage's (float32 as they are), one output only
// (RyzenAI-SW#369: multi-output NPU graphs come back wrong or NaN).
NpuStageSpec readVitisAiNpu(const YamlReader& r, const ModelManifest& m, const YAML::Node& node,
                            const std::string& path, const StageSpec& stage) {
  r.rejectUnknownKeys(node, path,
                      {"runtime", "compiler", "config_file", "min_npu_nodes", "timeout_ms",
                       "canary_tolerance", "canary_interval_s", "canary"});
  NpuStageSpec n;
  n.runtime = "vitisai";
  n.model = stage.file;
  n.compiler = r.getString(node, path, "compiler");
  if (n.compiler != "bf16" && n.compiler != "int8") {
    r.fail(node["compiler"], YamlReader::join(path, "compiler"),
           fmt::format("must be bf16 (a float model) or int8 (a QDQ model), got '{}'", n.compiler));
  }
  const bool integer = m.quantization && m.quantization->isInteger();
  if (m.quantization && integer != (n.compiler == "int8")) {
    r.fail(node["compiler"], YamlReader::join(path, "compiler"),
           fmt::format("the model is {} (quantization.preset {}): compiler must be {}",
                       integer ? "integer" : "float", m.quantization->preset,
                       integer ? "int8" : "bf16"));
  }
  if (node["config_file"]) {
    if (n.compiler != "bf16") {
      r.fail(node["config_file"], YamlReader::join(path, "config_file"),
             "only the bf16 compiler takes a config_file");
    }
    n.configFile = requireListedFile(r, m, node, path, "config_file");
  }
  n.minNpuNodes = static_cast<int>(r.getInt(node, path, "min_npu_nodes", 1, 1000000, 1));
  n.timeoutMs = static_cast<int>(r.getInt(node, path, "timeout_ms", 10, 600000, n.timeoutMs));
  n.canaryTolerance = static_cast<float>(r.getDouble(node, path, "canary_tolerance", 0, 1e6, 1e-3));
  n.canaryIntervalS =
      static_cast<int>(r.getInt(node, path, "canary_interval_s", 0, 86400 * 7, 600));
  if (stage.outputs.size() != 1) {
    r.fail(node, path,
           fmt::format("a vitisai stage must have exactly one output, '{}' has {} (multi-output "
                       "NPU graphs return wrong or NaN outputs, RyzenAI-SW#369)",
                       stage.name, stage.outputs.size()));
  }
  int index = 0;
  auto bind = [&](const TensorSpec& t, NpuArgRole role) {
    n.arguments.push_back(NpuArgument{index++, role, 0, 0, t.name, ""});
    DeviceTensorSpec d{t.name, t.shape, "onnx", "float32"};
    n.arguments.back().bytes = d.byteSize();
    (role == NpuArgRole::kInput ? n.inputs : n.outputs).push_back(std::move(d));
  };
  for (const TensorSpec& t : stage.inputs) bind(t, NpuArgRole::kInput);
  for (const TensorSpec& t : stage.outputs) bind(t, NpuArgRole::kOutput);
  YAML::Node canary = r.child(node, path, "canary");
  std::string cp = YamlReader::join(path, "canary");
  r.rejectUnknownKeys(canary, cp, {"image"});
  n.canaryImage = requireListedFile(r, m, canary, cp, "image");
  return n;
}

}  // namespace vigil::manifest_npu
