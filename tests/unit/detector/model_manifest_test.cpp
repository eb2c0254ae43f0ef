#include "detector/model_manifest.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "tests/temp_dir.h"

namespace vigil {
namespace {

const std::filesystem::path kShippedManifest =
    std::filesystem::path(VIGIL_SOURCE_DIR) / "models/yolox-nano/model.yaml";

std::string readFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The shipped manifest with one textual replacement, written into `dir`.
std::filesystem::path variant(const TempDir& dir, const std::string& from, const std::string& to) {
  std::string text = readFile(kShippedManifest);
  auto pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  auto path = dir.path() / "model.yaml";
  std::ofstream(path) << text;
  return path;
}

TEST(ModelManifestTest, ShippedManifestDescribesYoloxNano) {
  auto m = loadModelManifest(kShippedManifest.parent_path());
  ASSERT_TRUE(m.has_value()) << m.error().message;
  EXPECT_EQ(m->name, "yolox-nano");
  EXPECT_EQ(m->input.width, 416);
  EXPECT_EQ(m->input.height, 416);
  EXPECT_EQ(m->input.channelOrder, ChannelOrder::kBgr);
  EXPECT_EQ(m->input.padValue, 114);
  EXPECT_TRUE(m->input.anySize) << "its graph runs at any multiple of 32 (Resize by scales)";
  EXPECT_FLOAT_EQ(m->input.valueMax, 255);
  ASSERT_EQ(m->stages.size(), 1U);
  EXPECT_EQ(m->stages[0].inputs[0].name, "images");
  EXPECT_EQ(m->stages[0].outputs[0].shape, (std::vector<std::int64_t>{1, 3549, 85}));
  EXPECT_EQ(m->postprocess.strides, (std::vector<int>{8, 16, 32}));
  EXPECT_EQ(m->postprocess.classNames.size(), 80U);
  EXPECT_EQ(m->postprocess.classIndex("person"), 0);
  EXPECT_EQ(m->postprocess.classIndex("toothbrush"), 79);
  ASSERT_EQ(m->files.size(), 1U);
  ASSERT_EQ(m->files[0].accepted.size(), 2U);
  EXPECT_EQ(m->files[0].accepted[0].sha256,
            "c789161ed43c8269fcd4e67c67eeeb4e80c622da2eb296a20bc6007bd18a0b7d");
  EXPECT_EQ(m->files[0].accepted[1].size, 3660092U);
}

TEST(ModelManifestTest, ABareOnnxFileIsRefusedWithTheWayToAModelDirectory) {
  TempDir dir;
  const auto onnx = dir.path() / "My_Model.ONNX";
  std::ofstream(onnx, std::ios::binary) << std::string("\x08\x07\x12\x04onnx\\q", 10);
  auto m = loadModelManifest(onnx);
  ASSERT_FALSE(m.has_value());
  EXPECT_EQ(m.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(m.error().message.find("My_Model.ONNX: an ONNX file, not a model directory"),
            std::string::npos)
      << m.error().message;
  EXPECT_NE(m.error().message.find("model.yaml"), std::string::npos);
  EXPECT_EQ(m.error().message.find("YAML"), std::string::npos) << "no YAML parse error";
}

TEST(ModelManifestTest, UnknownKeyIsRejectedWithLineAndColumn) {
  TempDir dir;
  auto path = variant(dir, "  pad_value: 114", "  pad_valu: 114");
  auto m = loadModelManifest(path);
  ASSERT_FALSE(m.has_value());
  EXPECT_EQ(m.error().code, ErrorCode::kInvalidData);
  // "<dir>/model.yaml:<line>:5: input.letterbox.pad_valu: unknown key (allowed here: ...)"
  const std::string& message = m.error().message;
  auto at = message.find("model.yaml:");
  ASSERT_NE(at, std::string::npos) << message;
  std::string rest = message.substr(at + std::string("model.yaml:").size());
  auto colon = rest.find(':');
  ASSERT_NE(colon, std::string::npos) << message;
  EXPECT_GT(std::stoi(rest.substr(0, colon)), 1) << message;
  EXPECT_EQ(rest.substr(colon, 41), ":5: input.letterbox.pad_valu: unknown key") << message;
}

TEST(ModelManifestTest, OutOfRangeValueNamesKeyAndValue) {
  TempDir dir;
  auto m = loadModelManifest(variant(dir, "pad_value: 114", "pad_value: 300"));
  ASSERT_FALSE(m.has_value());
  EXPECT_NE(m.error().message.find("input.letterbox.pad_value: must be between 0 and 255, got 300"),
            std::string::npos)
      << m.error().message;
}

TEST(ModelManifestTest, MalformedHashIsRejected) {
  TempDir dir;
  auto m = loadModelManifest(variant(dir, "sha256: c789161e", "sha256: C789161e"));
  ASSERT_FALSE(m.has_value());
  EXPECT_NE(m.error().message.find("files.yolox_nano.onnx.accepted[0].sha256"), std::string::npos)
      << m.error().message;
}

TEST(ModelManifestTest, OutputShapeMustMatchStridesAndClasses) {
  TempDir dir;
  auto m = loadModelManifest(variant(dir, "shape: [1, 3549, 85]", "shape: [1, 3549, 84]"));
  ASSERT_FALSE(m.has_value());
  EXPECT_NE(m.error().message.find("must be [1, 3549, 85]"), std::string::npos)
      << m.error().message;
}

TEST(ModelManifestTest, StageFileMustBeListed) {
  TempDir dir;
  auto m = loadModelManifest(variant(dir, "file: yolox_nano.onnx", "file: other.onnx"));
  ASSERT_FALSE(m.has_value());
  EXPECT_NE(m.error().message.find("stages[0].file: 'other.onnx' is not listed under files"),
            std::string::npos)
      << m.error().message;
}

TEST(ModelManifestTest, MultiStageManifestIsAccepted) {
  // The format carries a chain of stages (backbone then head); both must parse.
  TempDir dir;
  std::string stage2 =
      "  - name: head\n"
      "    runtime: onnx\n"
      "    file: yolox_nano.onnx\n"
      "    inputs:\n"
      "      - {name: features, shape: [1, 64, 52, 52], layout: NCHW, dtype: float32}\n"
      "    outputs:\n"
      "      - {name: output, shape: [1, 3549, 85], layout: anchors-by-channels, dtype: float32}\n"
      "\n# How the last";
  auto m = loadModelManifest(variant(dir, "\n# How the last", "\n" + stage2));
  ASSERT_TRUE(m.has_value()) << m.error().message;
  ASSERT_EQ(m->stages.size(), 2U);
  EXPECT_EQ(m->stages[1].name, "head");
  EXPECT_EQ(m->stages[1].inputs[0].elementCount(), 64 * 52 * 52);
}

TEST(ModelManifestTest, QuantizationRecordIsReadAndChecked) {
  const std::string sha(64, 'a');
  const std::string record =
      "quantization:\n"
      "  preset: a8w8\n"
      "  precision: int8 weights, uint8 activations\n"
      "  source_model: {file: yolox_nano.onnx, sha256: " +
      sha +
      "}\n"
      "  methods: [bias correction]\n"
      "  calibration:\n"
      "    frames: 2\n"
      "    sources:\n"
      "    - {file: clip.mp4, sha256: " +
      sha +
      ", frames: [0, 9]}\n"
      "files:";
  TempDir dir;
  auto m = loadModelManifest(variant(dir, "files:", record));
  ASSERT_TRUE(m.has_value()) << m.error().message;
  ASSERT_TRUE(m->quantization.has_value());
  EXPECT_TRUE(m->quantization->isInteger());
  EXPECT_EQ(m->quantization->precision, "int8 weights, uint8 activations");
  EXPECT_EQ(m->quantization->methods, std::vector<std::string>{"bias correction"});
  ASSERT_EQ(m->quantization->calibration.size(), 1U);
  EXPECT_EQ(m->quantization->calibration[0].frames, 2U);

  TempDir unknown;
  auto bad = loadModelManifest(
      variant(unknown, "files:", std::string(record).replace(record.find("a8w8"), 4, "int4")));
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("quantization.preset: unknown preset 'int4'"),
            std::string::npos)
      << bad.error().message;

  // An integer model must say what it was calibrated on.
  TempDir uncalibrated;
  const std::string noCalibration = record.substr(0, record.find("  calibration:")) + "files:";
  auto missing = loadModelManifest(variant(uncalibrated, "files:", noCalibration));
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message.find("quantization.calibration"), std::string::npos)
      << missing.error().message;
}

TEST(ModelManifestTest, EveryShippedNpuModelHasAVitisAiStageWithItsCanaryPhotograph) {
  for (const char* preset : {"float", "xint8", "a8w8", "a16w8"}) {
    const auto dir = std::filesystem::path(VIGIL_SOURCE_DIR) / "models" /
                     (std::string("yolox-nano-npu-") + preset);
    auto m = loadModelManifest(dir);
    ASSERT_TRUE(m.has_value()) << m.error().message;
    const StageSpec* npu = m->npuStage();
    ASSERT_NE(npu, nullptr) << preset;
    EXPECT_EQ(npu->npu->runtime, "vitisai");
    EXPECT_EQ(npu->npu->compiler, std::string(preset) == "float" ? "bf16" : "int8");
    EXPECT_EQ(npu->npu->model, "npu.onnx");
    EXPECT_EQ(npu->npu->minNpuNodes, 113) << "every convolution of YOLOX-nano";
    EXPECT_EQ(npu->npu->canaryImage, "canary.jpg");
    ASSERT_EQ(npu->npu->outputs.size(), 1U);
    EXPECT_EQ(npu->npu->outputs[0].layout, "onnx");
    EXPECT_EQ(npu->npu->outputs[0].byteSize(), 85U * 3549U * 4U);
    for (const ModelFile& f : m->files) {
      auto check = verifyModelFile(*m, f, false);
      EXPECT_TRUE(check.has_value()) << check.error().message;
    }
  }
}

TEST(ModelManifestTest, AVitisAiStageIsCheckedAgainstTheModelItCompiles) {
  const auto xint8 =
      std::filesystem::path(VIGIL_SOURCE_DIR) / "models/yolox-nano-npu-xint8/model.yaml";
  const std::string text = readFile(xint8);
  auto broken = [&](const std::string& from, const std::string& to) {
    TempDir dir;
    std::string t = text;
    t.replace(t.find(from), from.size(), to);
    for (const char* f : {"npu.onnx", "head.onnx", "canary.jpg"}) {
      std::filesystem::copy_file(xint8.parent_path() / f, dir.path() / f);
    }
    std::ofstream(dir.path() / "model.yaml") << t;
    auto m = loadModelManifest(dir.path());
    return m ? std::string("loaded") : m.error().message;
  };
  EXPECT_NE(broken("compiler: int8", "compiler: bf16")
                .find("the model is integer (quantization.preset xint8): compiler must be int8"),
            std::string::npos);
  EXPECT_NE(broken("runtime: vitisai", "runtime: tensorrt").find("must be xrt or vitisai"),
            std::string::npos);
  EXPECT_NE(broken("canary: {image: canary.jpg}", "canary: {image: other.jpg}")
                .find("'other.jpg' is not listed under files"),
            std::string::npos);
  EXPECT_NE(broken("    compiler: int8\n", "    compiler: int8\n    config_file: head.onnx\n")
                .find("only the bf16 compiler takes a config_file"),
            std::string::npos);
  // Two outputs: RyzenAI-SW#369 (multi-output NPU graphs come back wrong or NaN).
  const std::string oneOutput =
      "  outputs:\n  - name: npu_output\n    shape: [1, 85, 3549]\n    layout: "
      "channels-by-anchors\n    dtype: float32\n  npu:";
  const std::string twoOutputs =
      "  outputs:\n  - name: npu_output\n    shape: [1, 85, 3549]\n    layout: "
      "channels-by-anchors\n    dtype: float32\n  - name: extra\n    shape: [1, 1]\n    "
      "layout: any\n    dtype: float32\n  npu:";
  EXPECT_NE(broken(oneOutput, twoOutputs).find("must have exactly one output"), std::string::npos);
}

// cpu_twin: the float model an NPU bundle was made from (what `auto` runs on the CPU).
TEST(ModelManifestTest, EveryShippedNpuModelNamesTheFloatModelAsItsCpuTwin) {
  for (const char* preset : {"float", "xint8", "a8w8", "a16w8"}) {
    auto m = loadModelManifest(std::filesystem::path(VIGIL_SOURCE_DIR) / "models" /
                               (std::string("yolox-nano-npu-") + preset));
    ASSERT_TRUE(m.has_value()) << m.error().message;
    ASSERT_TRUE(m->cpuTwin.has_value()) << preset;
    EXPECT_EQ(m->cpuTwin->model, "../yolox-nano");
    EXPECT_EQ(m->cpuTwin->sha256, m->quantization->sourceSha256);
  }
  auto plain = loadModelManifest(kShippedManifest);
  ASSERT_TRUE(plain.has_value());
  EXPECT_FALSE(plain->cpuTwin.has_value());
}

TEST(ModelManifestTest, ABadCpuTwinIsRefusedWithLineAndColumn) {
  const auto a8w8 =
      std::filesystem::path(VIGIL_SOURCE_DIR) / "models/yolox-nano-npu-a8w8/model.yaml";
  const std::string text = readFile(a8w8);
  const std::string source = "695e750a5d5754bb5a8d5325643b59282191a7e7a564e435a415fd3c578eab14";
  const std::string twin = "cpu_twin: {model: ../yolox-nano, sha256: " + source + "}";
  auto broken = [&](const std::string& to) {
    TempDir dir;
    std::string t = text;
    const auto at = t.find(twin);
    EXPECT_NE(at, std::string::npos);
    if (at != std::string::npos) t.replace(at, twin.size(), to);
    for (const char* f : {"npu.onnx", "head.onnx", "canary.jpg"}) {
      std::filesystem::copy_file(a8w8.parent_path() / f, dir.path() / f);
    }
    std::ofstream(dir.path() / "model.yaml") << t;
    auto m = loadModelManifest(dir.path());
    return m ? std::string("loaded") : m.error().message;
  };
  // "<dir>/model.yaml:<line>:<col>: cpu_twin...: reason", the line being the twin's, the last.
  const auto line = std::to_string(std::count(text.begin(), text.end(), '\n'));
  auto expectAt = [&](const std::string& message, const std::string& what) {
    EXPECT_NE(message.find("model.yaml:" + line + ":"), std::string::npos) << message;
    EXPECT_NE(message.find(what), std::string::npos) << message;
  };
  expectAt(broken("cpu_twin: {model: /var/lib/vigil/models/yolox-nano, sha256: " + source + "}"),
           "cpu_twin.model: must be a model directory relative to this one");
  expectAt(broken("cpu_twin: {model: ../yolox-nano, sha256: " + source.substr(1) + "}"),
           "cpu_twin.sha256: must be 64 lower-case hex digits");
  std::string other = source;
  other[0] = '7';
  expectAt(broken("cpu_twin: {model: ../yolox-nano, sha256: " + other + "}"),
           "cpu_twin.sha256: must be quantization.source_model's sha256 " + source);
  expectAt(broken("cpu_twin: {model: ../yolox-nano, sha: " + source + "}"),
           "cpu_twin.sha: unknown key");
  expectAt(broken("cpu_twin: {sha256: " + source + "}"), "cpu_twin.model");
  expectAt(broken("cpu_twin: ../yolox-nano"), "cpu_twin");
  // A model without an NPU stage has nothing for a twin to stand in for.
  TempDir dir;
  auto plain = variant(dir, "schema: 1\n", "schema: 1\n" + twin + "\n");
  auto m = loadModelManifest(plain);
  ASSERT_FALSE(m.has_value());
  EXPECT_NE(m.error().message.find("cpu_twin: only a model with an NPU stage names a CPU twin"),
            std::string::npos)
      << m.error().message;
}

TEST(ModelManifestTest, MissingManifestIsNotFound) {
  TempDir dir;
  auto m = loadModelManifest(dir.path());
  ASSERT_FALSE(m.has_value());
  EXPECT_EQ(m.error().code, ErrorCode::kNotFound);
}

TEST(ModelFileTest, Sha256OfKnownContent) {
  TempDir dir;
  std::ofstream(dir.path() / "abc") << "abc";
  auto h = sha256File(dir.path() / "abc");
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(*h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(ModelFileTest, UnlistedWeightsAreRefusedUnlessOverridden) {
  TempDir dir;
  auto path = variant(dir, "name: yolox-nano", "name: yolox-nano");
  std::ofstream(dir.path() / "yolox_nano.onnx") << "not the model";
  auto m = loadModelManifest(path);
  ASSERT_TRUE(m.has_value()) << m.error().message;
  auto refused = verifyModelFile(*m, m->files[0], false);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kUnverifiedModel);
  EXPECT_NE(refused.error().message.find("--allow-unverified-model"), std::string::npos);
  auto allowed = verifyModelFile(*m, m->files[0], true);
  ASSERT_TRUE(allowed.has_value());
  EXPECT_EQ(allowed->variant, nullptr);
  EXPECT_EQ(allowed->size, 13U);
}

TEST(ModelFileTest, MissingWeightsSayHowToInstallThem) {
  TempDir dir;
  auto m = loadModelManifest(variant(dir, "name: yolox-nano", "name: yolox-nano"));
  ASSERT_TRUE(m.has_value());
  auto r = verifyModelFile(*m, m->files[0], false);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
  EXPECT_NE(r.error().message.find("fetch-model"), std::string::npos);
}

}  // namespace
}  // namespace vigil
