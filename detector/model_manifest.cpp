#include "detector/model_manifest.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <fstream>

#include "detector/model_manifest_npu.h"
#include "foundation/yaml_reader.h"

namespace vigil {

std::int64_t TensorSpec::elementCount() const {
  std::int64_t count = 1;
  for (std::int64_t d : shape) count *= d;
  return count;
}

int PostprocessSpec::largestStride() const {
  return strides.empty() ? 0 : *std::max_element(strides.begin(), strides.end());
}

int PostprocessSpec::classIndex(std::string_view className) const {
  for (std::size_t i = 0; i < classNames.size(); ++i) {
    if (classNames[i] == className) return static_cast<int>(i);
  }
  return -1;
}

std::int64_t DeviceTensorSpec::elementCount() const {
  std::int64_t count = 1;
  for (std::int64_t d : shape) count *= d;
  return count;
}

std::int64_t DeviceTensorSpec::storedCount() const {
  if (layout != "YCXC8" || shape.size() != 4) return elementCount();
  return shape[0] * ((shape[1] + 7) / 8 * 8) * shape[2] * shape[3];
}

std::size_t DeviceTensorSpec::elementBytes() const {
  if (dtype == "float32") return 4;
  if (dtype == "bf16") return 2;
  return 1;  // int8, uint8
}

const NpuArgument* NpuStageSpec::argumentFor(NpuArgRole role) const {
  for (const NpuArgument& a : arguments) {
    if (a.role == role) return &a;
  }
  return nullptr;
}

const StageSpec* ModelManifest::npuStage() const {
  for (const StageSpec& s : stages) {
    if (s.npu) return &s;
  }
  return nullptr;
}

const ModelFile* ModelManifest::findFile(std::string_view fileName) const {
  for (const ModelFile& f : files) {
    if (f.name == fileName) return &f;
  }
  return nullptr;
}

namespace {

bool isLowerHex(const std::string& s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// A map's `sha256`: 64 lower-case hex digits, as sha256File writes them.
std::string readSha256(const YamlReader& r, const YAML::Node& map, const std::string& path) {
  std::string value = r.getString(map, path, "sha256");
  if (value.size() != 64 || !isLowerHex(value)) {
    r.fail(map["sha256"], YamlReader::join(path, "sha256"), "must be 64 lower-case hex digits");
  }
  return value;
}

TensorSpec readTensor(const YamlReader& r, const YAML::Node& node, const std::string& path) {
  r.rejectUnknownKeys(node, path, {"name", "shape", "layout", "dtype"});
  TensorSpec t;
  t.name = r.getString(node, path, "name");
  t.shape = r.getIntList(node, path, "shape", 1, kMaxTensorDim);
  if (t.shape.empty()) r.fail(node["shape"], YamlReader::join(path, "shape"), "must not be empty");
  t.layout = r.getString(node, path, "layout");
  t.dtype = r.getString(node, path, "dtype");
  if (t.dtype != "float32") {
    r.fail(node["dtype"], YamlReader::join(path, "dtype"),
           fmt::format("unsupported dtype '{}' (this build supports: float32)", t.dtype));
  }
  return t;
}

std::vector<TensorSpec> readTensors(const YamlReader& r, const YAML::Node& stage,
                                    const std::string& path, const char* key) {
  YAML::Node list = r.child(stage, path, key);
  std::string p = YamlReader::join(path, key);
  r.expectSequence(list, p);
  if (list.size() == 0) r.fail(list, p, "must list at least one tensor");
  std::vector<TensorSpec> tensors;
  for (std::size_t i = 0; i < list.size(); ++i) {
    tensors.push_back(readTensor(r, list[i], YamlReader::index(p, i)));
  }
  return tensors;
}

void readFiles(const YamlReader& r, ModelManifest& m) {
  YAML::Node files = r.child(r.root(), "", "files");
  r.expectMap(files, "files");
  for (const auto& item : files) {
    ModelFile f;
    f.name = item.first.Scalar();
    std::string path = YamlReader::join("files", f.name);
    if (f.name.empty() || f.name.find("..") != std::string::npos || f.name.front() == '/') {
      r.fail(item.first, path, "a file name must be a plain name inside the model directory");
    }
    r.rejectUnknownKeys(item.second, path, {"url", "accepted"});
    f.url = r.getString(item.second, path, "url", "");
    YAML::Node accepted = r.child(item.second, path, "accepted");
    std::string ap = YamlReader::join(path, "accepted");
    r.expectSequence(accepted, ap);
    if (accepted.size() == 0) r.fail(accepted, ap, "must list at least one sha256");
    for (std::size_t i = 0; i < accepted.size(); ++i) {
      std::string vp = YamlReader::index(ap, i);
      r.rejectUnknownKeys(accepted[i], vp, {"sha256", "size", "origin"});
      AcceptedVariant v;
      v.sha256 = readSha256(r, accepted[i], vp);
      v.size =
          static_cast<std::uint64_t>(r.getInt(accepted[i], vp, "size", 1, std::int64_t{1} << 40));
      v.origin = r.getString(accepted[i], vp, "origin", "");
      f.accepted.push_back(std::move(v));
    }
    m.files.push_back(std::move(f));
  }
}

void readInput(const YamlReader& r, ModelManifest& m) {
  YAML::Node in = r.child(r.root(), "", "input");
  r.rejectUnknownKeys(in, "input",
                      {"width", "height", "channel_order", "value_range", "letterbox", "any_size"});
  m.input.width = static_cast<int>(r.getInt(in, "input", "width", 32, 8192));
  m.input.height = static_cast<int>(r.getInt(in, "input", "height", 32, 8192));
  std::string order = r.getString(in, "input", "channel_order");
  if (order == "bgr") {
    m.input.channelOrder = ChannelOrder::kBgr;
  } else if (order == "rgb") {
    m.input.channelOrder = ChannelOrder::kRgb;
  } else {
    r.fail(in["channel_order"], "input.channel_order",
           fmt::format("must be bgr or rgb, got '{}'", order));
  }
  std::vector<double> range = r.getDoubleList(in, "input", "value_range");
  if (range.size() != 2 || !(range[0] < range[1])) {
    r.fail(in["value_range"], "input.value_range", "must be [min, max] with min < max");
  }
  m.input.valueMin = static_cast<float>(range[0]);
  m.input.valueMax = static_cast<float>(range[1]);
  YAML::Node lb = r.child(in, "input", "letterbox");
  r.rejectUnknownKeys(lb, "input.letterbox", {"anchor", "pad_value"});
  std::string anchor = r.getString(lb, "input.letterbox", "anchor");
  if (anchor != "top-left") {
    r.fail(lb["anchor"], "input.letterbox.anchor",
           fmt::format("only top-left is supported (the YOLOX rule), got '{}'", anchor));
  }
  m.input.padValue = static_cast<int>(r.getInt(lb, "input.letterbox", "pad_value", 0, 255));
  m.input.anySize = r.getBool(in, "input", "any_size", false);
}

void readStages(const YamlReader& r, ModelManifest& m) {
  YAML::Node stages = r.child(r.root(), "", "stages");
  r.expectSequence(stages, "stages");
  if (stages.size() == 0) r.fail(stages, "stages", "must list at least one stage");
  for (std::size_t i = 0; i < stages.size(); ++i) {
    std::string path = YamlReader::index("stages", i);
    const YAML::Node& node = stages[i];
    r.rejectUnknownKeys(node, path, {"name", "runtime", "file", "inputs", "outputs", "npu"});
    StageSpec s;
    s.name = r.getString(node, path, "name");
    s.runtime = r.getString(node, path, "runtime");
    if (s.runtime != "onnx") {
      r.fail(node["runtime"], YamlReader::join(path, "runtime"),
             fmt::format("unknown runtime '{}' (this build supports: onnx)", s.runtime));
    }
    s.file = r.getString(node, path, "file");
    if (m.findFile(s.file) == nullptr) {
      r.fail(node["file"], YamlReader::join(path, "file"),
             fmt::format("'{}' is not listed under files", s.file));
    }
    s.inputs = readTensors(r, node, path, "inputs");
    s.outputs = readTensors(r, node, path, "outputs");
    if (node["npu"]) {
      if (m.npuStage() != nullptr) {
        r.fail(node["npu"], YamlReader::join(path, "npu"), "only one stage may run on the NPU");
      }
      const YAML::Node& npu = node["npu"];
      const std::string np = YamlReader::join(path, "npu");
      const std::string runtime = r.getString(npu, np, "runtime", "xrt");
      if (runtime == "vitisai") {
        s.npu = manifest_npu::readVitisAiNpu(r, m, npu, np, s);
      } else if (runtime == "xrt") {
        s.npu = manifest_npu::readNpu(r, m, npu, np, s);
      } else {
        r.fail(npu["runtime"], YamlReader::join(np, "runtime"),
               fmt::format("must be xrt or vitisai, got '{}'", runtime));
      }
    }
    m.stages.push_back(std::move(s));
  }
  const TensorSpec& first = m.stages.front().inputs.front();
  std::vector<std::int64_t> expected{1, 3, m.input.height, m.input.width};
  if (first.layout != "NCHW" || first.shape != expected) {
    r.fail(stages[0]["inputs"], "stages[0].inputs[0]",
           fmt::format("must be NCHW [1, 3, {}, {}] to match input.height/width", m.input.height,
                       m.input.width));
  }
}

void readPostprocess(const YamlReader& r, ModelManifest& m) {
  YAML::Node pp = r.child(r.root(), "", "postprocess");
  const std::string path = "postprocess";
  r.rejectUnknownKeys(pp, path,
                      {"type", "strides", "scores_activated", "score", "default_min_score",
                       "default_nms_iou", "default_classes", "class_names"});
  PostprocessSpec& p = m.postprocess;
  p.type = r.getString(pp, path, "type");
  if (p.type != "yolox") {
    r.fail(pp["type"], "postprocess.type", fmt::format("unknown type '{}' (known: yolox)", p.type));
  }
  for (std::int64_t s : r.getIntList(pp, path, "strides", 1, 1024)) {
    p.strides.push_back(static_cast<int>(s));
    if (m.input.width % s != 0 || m.input.height % s != 0) {
      r.fail(pp["strides"], "postprocess.strides",
             fmt::format("stride {} does not divide the input size", s));
    }
  }
  p.scoresActivated = r.getBool(pp, path, "scores_activated");
  std::string score = r.getString(pp, path, "score");
  if (score != "objectness-times-class") {
    r.fail(pp["score"], "postprocess.score", "only objectness-times-class is supported");
  }
  p.defaultMinScore = static_cast<float>(r.getDouble(pp, path, "default_min_score", 0, 1));
  p.defaultNmsIou = static_cast<float>(r.getDouble(pp, path, "default_nms_iou", 0, 1));
  p.classNames = r.getStringList(pp, path, "class_names");
  p.defaultClasses = r.getStringList(pp, path, "default_classes");
  for (std::size_t i = 0; i < p.defaultClasses.size(); ++i) {
    if (p.classIndex(p.defaultClasses[i]) < 0) {
      r.fail(pp["default_classes"][i], YamlReader::index("postprocess.default_classes", i),
             fmt::format("'{}' is not in class_names", p.defaultClasses[i]));
    }
  }

  // The last stage's output must be [1, anchors, 5 + classes] for the YOLOX decode.
  std::int64_t anchors = 0;
  for (int s : p.strides) {
    anchors += static_cast<std::int64_t>(m.input.width / s) * (m.input.height / s);
  }
  const TensorSpec& out = m.stages.back().outputs.front();
  std::vector<std::int64_t> expected{1, anchors,
                                     5 + static_cast<std::int64_t>(p.classNames.size())};
  if (out.shape != expected) {
    r.fail(pp, "postprocess",
           fmt::format("the last stage's output shape must be [1, {}, {}] for these strides and "
                       "{} classes",
                       expected[1], expected[2], p.classNames.size()));
  }
}

void readQuantization(const YamlReader& r, ModelManifest& m) {
  const YAML::Node& root = r.root();
  if (!root["quantization"]) return;
  YAML::Node q = r.child(root, "", "quantization");
  const std::string path = "quantization";
  r.expectMap(q, path);
  r.rejectUnknownKeys(q, path,
                      {"preset", "precision", "source_model", "npu_part", "weights", "activations",
                       "methods", "starved_tensors", "calibration"});
  QuantizationSpec spec;
  spec.preset = r.getString(q, path, "preset");
  if (spec.preset != "float" && spec.preset != "xint8" && spec.preset != "a8w8" &&
      spec.preset != "a16w8") {
    r.fail(q["preset"], YamlReader::join(path, "preset"),
           fmt::format("unknown preset '{}' (known: float, xint8, a8w8, a16w8)", spec.preset));
  }
  const std::string sp = YamlReader::join(path, "source_model");
  YAML::Node source = r.child(q, path, "source_model");
  r.rejectUnknownKeys(source, sp, {"file", "sha256"});
  spec.sourceFile = r.getString(source, sp, "file");
  spec.sourceSha256 = readSha256(r, source, sp);
  spec.precision = r.getString(q, path, "precision");
  spec.weights = r.getString(q, path, "weights", "");
  spec.activations = r.getString(q, path, "activations", "");
  if (q["methods"]) spec.methods = r.getStringList(q, path, "methods");
  if (spec.isInteger()) {
    // An integer model without its calibration record cannot say what it was tuned on.
    const std::string cp = YamlReader::join(path, "calibration");
    YAML::Node calibration = r.child(q, path, "calibration");
    r.rejectUnknownKeys(calibration, cp, {"frames", "sources"});
    r.getInt(calibration, cp, "frames", 1, 1 << 20);
    YAML::Node sources = r.child(calibration, cp, "sources");
    const std::string lp = YamlReader::join(cp, "sources");
    r.expectSequence(sources, lp);
    if (sources.size() == 0) r.fail(sources, lp, "must list the calibration files");
    for (std::size_t i = 0; i < sources.size(); ++i) {
      const std::string ip = YamlReader::index(lp, i);
      r.rejectUnknownKeys(sources[i], ip, {"file", "sha256", "frames"});
      CalibrationSource c;
      c.file = r.getString(sources[i], ip, "file");
      c.sha256 = readSha256(r, sources[i], ip);
      c.frames = r.getIntList(sources[i], ip, "frames", 0, std::int64_t{1} << 40).size();
      spec.calibration.push_back(std::move(c));
    }
  }
  m.quantization = std::move(spec);
}

// After the stages and the quantization record: a twin stands in for an NPU bundle's stages, and
// it is the float model the bundle was made from.
void readCpuTwin(const YamlReader& r, ModelManifest& m) {
  const YAML::Node& root = r.root();
  if (!root["cpu_twin"]) return;
  const std::string path = "cpu_twin";
  YAML::Node node = r.child(root, "", "cpu_twin");
  r.expectMap(node, path);
  r.rejectUnknownKeys(node, path, {"model", "sha256"});
  CpuTwinSpec twin;
  twin.model = r.getString(node, path, "model");
  if (twin.model.empty() || twin.model.front() == '/') {
    r.fail(node["model"], YamlReader::join(path, "model"),
           fmt::format("must be a model directory relative to this one (such as ../yolox-nano), "
                       "got '{}'",
                       twin.model));
  }
  twin.sha256 = readSha256(r, node, path);
  if (m.npuStage() == nullptr) {
    r.fail(node, path,
           "only a model with an NPU stage names a CPU twin (it answers when the NPU cannot)");
  }
  if (m.quantization && twin.sha256 != m.quantization->sourceSha256) {
    r.fail(node["sha256"], YamlReader::join(path, "sha256"),
           fmt::format("must be quantization.source_model's sha256 {} (the twin is the float model "
                       "this one was made from), got {}",
                       m.quantization->sourceSha256, twin.sha256));
  }
  m.cpuTwin = std::move(twin);
}

}  // namespace

namespace {

bool isOnnxFile(const std::filesystem::path& file) {
  std::string ext = file.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".onnx";
}

}  // namespace

Expected<ModelManifest> loadModelManifest(const std::filesystem::path& path) {
  std::filesystem::path file = path;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) file = path / "model.yaml";
  const auto status = std::filesystem::status(file, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) {
    // Most often a directory the daemon's user may not read: say so, not "no such file".
    return makeError(ErrorCode::kPermissionDenied, "{}: cannot read the model manifest: {}",
                     file.string(), ec.message());
  }
  if (!std::filesystem::exists(status)) {
    return makeError(ErrorCode::kNotFound, "{}: no such model manifest", file.string());
  }
  if (isOnnxFile(file)) {
    // A bare model says nothing of its input size, output layout or classes: refuse it with the
    // way out instead of parsing a binary file as YAML.
    return makeError(ErrorCode::kInvalidArgument,
                     "{}: an ONNX file, not a model directory; Vigil needs a directory holding the "
                     ".onnx and a model.yaml that says its input, output layout and classes (copy "
                     "models/yolox-nano/model.yaml beside it and edit it; models/README.md) and "
                     "takes the directory",
                     file.string());
  }
  try {
    YamlReader r = YamlReader::fromFile(file.string());
    const YAML::Node& root = r.root();
    r.rejectUnknownKeys(root, "",
                        {"schema", "name", "description", "license", "published_accuracy", "files",
                         "input", "stages", "postprocess", "quantization", "cpu_twin"});
    ModelManifest m;
    m.manifestPath = std::filesystem::absolute(file);
    m.schema = static_cast<int>(r.getInt(root, "", "schema", 1, 1));
    m.name = r.getString(root, "", "name");
    m.description = r.getString(root, "", "description", "");
    m.license = r.getString(root, "", "license", "");
    readFiles(r, m);
    readInput(r, m);
    readQuantization(r, m);  // before the stages: a vitisai stage's compiler must match it
    readStages(r, m);
    readPostprocess(r, m);
    readCpuTwin(r, m);
    return m;
  } catch (const YamlError& e) {
    return makeError(ErrorCode::kInvalidData, "{}", e.what());
  }
}

Expected<std::string> sha256File(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return makeError(ErrorCode::kNotFound, "{}: cannot open", path.string());
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) {
    return makeError(ErrorCode::kUnsupported, "sha256 is not available from OpenSSL");
  }
  std::array<char, 1 << 16> buffer{};
  while (in) {
    in.read(buffer.data(), buffer.size());
    EVP_DigestUpdate(ctx.get(), buffer.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) return makeError(ErrorCode::kInvalidData, "{}: read error", path.string());
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  EVP_DigestFinal_ex(ctx.get(), digest.data(), &length);
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

Expected<FileCheck> verifyModelFile(const ModelManifest& manifest, const ModelFile& file,
                                    bool allowUnverified) {
  FileCheck check;
  check.path = manifest.directory() / file.name;
  std::error_code ec;
  const auto status = std::filesystem::status(check.path, ec);
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    // A FIFO here would block the hash below until a writer came.
    return makeError(ErrorCode::kInvalidData,
                     "{}: not a regular file (a FIFO, device or directory)", check.path.string());
  }
  if (!std::filesystem::is_regular_file(status)) {
    return makeError(ErrorCode::kNotFound,
                     "{}: model file missing; fetch and verify it with `fetch-model.sh --model {}` "
                     "(scripts/ in the source tree, /usr/share/vigil/ when installed)",
                     check.path.string(), manifest.directory().string());
  }
  check.size = std::filesystem::file_size(check.path, ec);
  auto hash = sha256File(check.path);
  if (!hash) return tl::unexpected(hash.error());
  check.sha256 = *hash;
  for (const AcceptedVariant& v : file.accepted) {
    if (v.sha256 == check.sha256 && v.size == check.size) {
      check.variant = &v;
      return check;
    }
  }
  if (allowUnverified) return check;
  return makeError(ErrorCode::kUnverifiedModel,
                   "{}: sha256 {} ({} bytes) is not listed in {}; refusing to run an unverified "
                   "model (override with --allow-unverified-model)",
                   check.path.string(), check.sha256, check.size, manifest.manifestPath.string());
}

}  // namespace vigil
