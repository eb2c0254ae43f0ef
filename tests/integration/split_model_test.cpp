// scripts/split-model.py on the real model: the split bundle computes what the whole model
// computes (outputs within 1e-4, identical detections) on real photographs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <string_view>
#include <utility>

#include "detector/cpu_stage.h"
#include "detector/detector.h"
#include "detector/npu/device_tensor.h"
#include "detector/verify.h"
#include "tests/npu/npu_fixtures.h"

namespace vigil {
namespace {

using testing::npuBundle;

TEST(SplitModelTest, BundleManifestDescribesBothStagesAndTheNpuSection) {
  VIGIL_REQUIRE_NPU_BUNDLE();
  auto m = loadModelManifest(npuBundle());
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_EQ(m->stages.size(), 2U);
  const StageSpec* npu = m->npuStage();
  ASSERT_NE(npu, nullptr);
  EXPECT_EQ(npu->name, "backbone");
  EXPECT_EQ(npu->npu->target, "npu1");
  EXPECT_EQ(npu->npu->flow, "xclbin+insts");
  EXPECT_EQ(npu->npu->kernel, "MLIR_AIE");
  ASSERT_EQ(npu->npu->outputs.size(), 3U);
  EXPECT_EQ(npu->npu->outputs[0].shape, (std::vector<std::int64_t>{1, 64, 52, 52}));
  EXPECT_EQ(m->stages[1].inputs[2].name, "1024");
  EXPECT_FALSE(npu->npu->canaryExpected.empty());
  for (const ModelFile& f : m->files) {
    auto check = verifyModelFile(*m, f, false);
    EXPECT_TRUE(check) << (check ? "" : check.error().message);
  }
}

TEST(SplitModelTest, SplitEqualsWholeOnRealPhotographs) {
  VIGIL_REQUIRE_NPU_BUNDLE();
  VIGIL_REQUIRE_COCO();
  DetectorOptions whole;
  whole.model = testing::modelDir();
  DetectorOptions split = whole;
  split.model = npuBundle();
  auto a = Detector::create(whole);
  auto b = Detector::create(split);
  ASSERT_TRUE(a) << a.error().message;
  ASSERT_TRUE(b) << b.error().message;

  // Raw outputs: both backends on the same letterboxed inputs.
  auto ma = loadModelManifest(whole.model);
  auto mb = loadModelManifest(split.model);
  auto ca = createBackend("cpu", *ma, {});
  auto cb = createBackend("cpu", *mb, {});
  ASSERT_TRUE(ca && cb);
  Letterbox lb(ma->input);
  int compared = 0;
  int withPersons = 0;
  for (const auto& path : testing::cocoImages(12)) {
    cv::Mat image = cv::imread(path.string());
    ASSERT_FALSE(image.empty()) << path;
    Tensor in;
    Tensor oa;
    Tensor ob;
    lb.run(image, in);
    ASSERT_TRUE((*ca)->infer(in, oa));
    ASSERT_TRUE((*cb)->infer(in, ob));
    EXPECT_LE(maxAbsDiff(oa.values(), ob.values()), 1e-4F) << path;

    DetectionResult ra;
    DetectionResult rb;
    ASSERT_TRUE((*a)->detect(image, ra));
    ASSERT_TRUE((*b)->detect(image, rb));
    ASSERT_EQ(ra.detections.size(), rb.detections.size()) << path;
    for (std::size_t i = 0; i < ra.detections.size(); ++i) {
      EXPECT_EQ(ra.detections[i].classId, rb.detections[i].classId);
      EXPECT_NEAR(ra.detections[i].score, rb.detections[i].score, 1e-5);
      EXPECT_NEAR(ra.detections[i].box.x, rb.detections[i].box.x, 1e-3);
      EXPECT_NEAR(ra.detections[i].box.y, rb.detections[i].box.y, 1e-3);
    }
    withPersons += ra.detections.empty() ? 0 : 1;
    ++compared;
  }
  EXPECT_EQ(compared, 12);
  EXPECT_GT(withPersons, 6);  // the comparison is about real detections, not empty lists
}

TEST(SplitModelTest, ScriptRefusesATensorTheModelDoesNotHave) {
  VIGIL_REQUIRE_MODEL();
  TempDir dir;
  std::string cmd = std::string(VIGIL_SYSTEM_PYTHON) +
                    " " VIGIL_SOURCE_DIR "/scripts/split-model.py --manifest " VIGIL_MODEL_DIR
                    "/model.yaml --cut 956,no_such_tensor --out " +
                    (dir.path() / "b").string() + " 2>" + (dir.path() / "err").string();
  int rc = std::system(cmd.c_str());
  EXPECT_NE(rc, 0);
  auto err = testing::readBytes(dir.path() / "err");
  std::string text(reinterpret_cast<const char*>(err.data()), err.size());
  EXPECT_NE(text.find("no tensor named 'no_such_tensor'"), std::string::npos) << text;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "b"));
}

// split-model.py --device-layout YCXC8 (mlir-aie's blocked conv2d activations, the layout the
// direct-XRT runtime reads): the canary the script packs is what the runtime's own unpacking and
// the CPU reference agree on. The input, unpacked (its 3 channels padded to 8 with zero bytes),
// run through the backbone on the CPU, gives the expected output, unpacked.
TEST(SplitModelTest, Ycxc8BundlesPackTheCanaryAsTheRuntimeUnpacksIt) {
  VIGIL_REQUIRE_NPU_BUNDLE();
  TempDir dir;
  const auto design = npuBundle().parent_path() / "npu-design";
  const auto out = dir.path() / "ycxc8";
  const std::string cmd = std::string(VIGIL_SYSTEM_PYTHON) +
                          " " VIGIL_SOURCE_DIR "/scripts/split-model.py --manifest " VIGIL_MODEL_DIR
                          "/model.yaml --cut 956,990,1024 --out " +
                          out.string() + " --xclbin " + (design / "design.xclbin").string() +
                          " --instructions " + (design / "insts.bin").string() +
                          " --device-layout YCXC8 --tolerance 1e-4 --reference-runner " +
                          VIGIL_BINARY + " > " + (dir.path() / "log").string() + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  auto m = loadModelManifest(out);  // checks every argument's bytes against the padded size
  ASSERT_TRUE(m) << m.error().message;
  const StageSpec& stage = *m->npuStage();
  const NpuStageSpec& npu = *stage.npu;
  ASSERT_EQ(npu.inputs.size(), 1U);
  ASSERT_EQ(npu.outputs.size(), 3U);
  EXPECT_EQ(npu.inputs[0].layout, "YCXC8");
  EXPECT_EQ(npu.inputs[0].shape, (std::vector<std::int64_t>{1, 3, 416, 416}));

  const auto inBytes = testing::readBytes(m->directory() / npu.canaryInput);
  ASSERT_EQ(inBytes.size(), npu.inputs[0].byteSize());
  std::vector<Tensor> inputs(1);
  inputs[0].resize(npu.inputs[0].shape);  // unpacking fills a tensor of the ONNX shape
  ASSERT_TRUE(unpackTensor(inBytes, npu.inputs[0], inputs[0]));
  // Channels 3..7 of every (row, x) are padding: zero bytes.
  std::size_t nonZeroPadding = 0;
  const auto* words = reinterpret_cast<const float*>(inBytes.data());
  for (std::size_t i = 0; i < inBytes.size() / sizeof(float); ++i) {
    if (i % 8 >= 3 && words[i] != 0.0F) ++nonZeroPadding;
  }
  EXPECT_EQ(nonZeroPadding, 0U);

  auto backbone = loadCpuStage(*m, stage);
  ASSERT_TRUE(backbone) << backbone.error().message;
  std::vector<Tensor> reference(3);
  ASSERT_TRUE((*backbone)->run(inputs, reference));
  const auto expected = testing::readBytes(m->directory() / npu.canaryExpected);
  std::size_t offset = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    const DeviceTensorSpec& spec = npu.outputs[i];
    ASSERT_LE(offset + spec.byteSize(), expected.size());
    Tensor unpacked;
    unpacked.resize(spec.shape);
    ASSERT_TRUE(unpackTensor(std::span(expected).subspan(offset, spec.byteSize()), spec, unpacked));
    EXPECT_LE(maxAbsDiff(unpacked.values(), reference[i].values()), 1e-4F) << spec.name;
    offset += spec.byteSize();
  }
  EXPECT_EQ(offset, expected.size());
}

}  // namespace
}  // namespace vigil

namespace vigil {
namespace {

// The bundle's model.yaml with textual replacements (each the first match), loaded.
Expected<ModelManifest> manifestWith(std::initializer_list<testing::TextReplacement> replacements) {
  TempDir dir;
  std::ofstream(dir.path() / "model.yaml") << testing::bundleManifestWith(replacements);
  return loadModelManifest(dir.path());
}

// The same, the load error or "loaded".
std::string manifestErrorWith(std::initializer_list<testing::TextReplacement> replacements) {
  auto m = manifestWith(replacements);
  return m ? std::string("loaded") : m.error().message;
}

std::string manifestErrorWith(std::string_view from, std::string_view to) {
  return manifestErrorWith({{from, to}});
}

TEST(NpuManifestTest, ErrorsSayFileLineAndKey) {
  VIGIL_REQUIRE_NPU_BUNDLE();
  std::string e = manifestErrorWith("target: npu1", "target: npu9");
  EXPECT_NE(e.find("model.yaml:"), std::string::npos) << e;
  EXPECT_NE(e.find("stages[0].npu.target: must be npu1 (XDNA) or npu2 (XDNA2), got 'npu9'"),
            std::string::npos)
      << e;
  e = manifestErrorWith("bytes: 692224", "bytes: 692225");
  EXPECT_NE(e.find("stages[0].npu.arguments[4].bytes: '956' is 692224 bytes"), std::string::npos)
      << e;
  e = manifestErrorWith("min_xrt_version: '2.13'", "min_xrt_version: two");
  EXPECT_NE(e.find("min_xrt_version: must be major.minor"), std::string::npos) << e;
  e = manifestErrorWith("xclbin: design.xclbin", "xclbin: other.xclbin");
  EXPECT_NE(e.find("'other.xclbin' is not listed under files"), std::string::npos) << e;
  e = manifestErrorWith("role: opcode", "role: weight");
  EXPECT_NE(e.find("unknown role 'weight' (known: opcode, instructions, instruction_count, input, "
                   "output, weights, scratch)"),
            std::string::npos)
      << e;
}

// The ELF flows: `instructions` names the ELF (listed with its sha256); the kernel's
// instruction slot stays in the argument table but has no buffer; full-elf has no xclbin.
TEST(NpuManifestTest, ElfFlowsNeedTheElfAndNoInstructionBufferFullElfNoXclbin) {
  VIGIL_REQUIRE_NPU_BUNDLE();
  const std::pair<std::string_view, std::string_view> noBytes{"role: instructions, bytes: 256}",
                                                              "role: instructions}"};
  EXPECT_EQ(manifestErrorWith({{"flow: xclbin+insts", "flow: xclbin+elf"}, noBytes}), "loaded");
  EXPECT_EQ(
      manifestErrorWith(
          {{"flow: xclbin+insts", "flow: full-elf"}, {"    xclbin: design.xclbin\n", ""}, noBytes}),
      "loaded");

  std::string e = manifestErrorWith("flow: xclbin+insts", "flow: xclbin+elf");
  EXPECT_NE(e.find("model.yaml:"), std::string::npos) << e;
  EXPECT_NE(e.find("stages[0].npu.arguments[1].bytes: flow xclbin+elf has no instruction buffer"),
            std::string::npos)
      << e;
  e = manifestErrorWith({{"flow: xclbin+insts", "flow: full-elf"}, noBytes});
  EXPECT_NE(e.find("stages[0].npu.xclbin: flow full-elf takes no xclbin"), std::string::npos) << e;
  e = manifestErrorWith({{"flow: xclbin+insts", "flow: xclbin+elf"},
                         noBytes,
                         {"instructions: insts.bin", "instructions: insts.elf"}});
  EXPECT_NE(e.find("'insts.elf' is not listed under files"), std::string::npos) << e;
  // xclbin+insts still needs the instruction buffer's size.
  e = manifestErrorWith(noBytes.first, noBytes.second);
  EXPECT_NE(e.find("stages[0].npu.arguments[1]"), std::string::npos) << e;
  EXPECT_NE(e.find("bytes"), std::string::npos) << e;
}

TEST(NpuManifestTest, QuantizedTensorsNeedScaleAndZeroPoint) {
  VIGIL_REQUIRE_NPU_BUNDLE();
  // The npu section's input (the only "- name: images" indented under npu.inputs) as int8.
  std::string e = manifestErrorWith(
      "    - name: images\n      shape: [1, 3, 416, 416]\n      layout: NCHW\n      dtype: "
      "float32",
      "    - name: images\n      shape: [1, 3, 416, 416]\n      layout: NCHW\n      dtype: int8");
  EXPECT_NE(e.find("stages[0].npu.inputs[0]"), std::string::npos) << e;
  EXPECT_NE(e.find("scale"), std::string::npos) << e;
}

// A weights buffer (mlir-aie's conv2d, bottleneck, yolo26n) is filled from a file listed with
// its sha256; the file's size is the buffer's.
TEST(NpuManifestTest, WeightsComeFromAListedFileOfTheBuffersSize) {
  VIGIL_REQUIRE_NPU_BUNDLE();
  const testing::WeightsReplacements weights(std::string(64, 'a'), 1000);
  auto m = manifestWith({weights.list(), weights.bind()});
  ASSERT_TRUE(m) << m.error().message;
  const NpuArgument& w = m->npuStage()->npu->arguments.back();
  EXPECT_EQ(w.index, 7);
  EXPECT_EQ(w.role, NpuArgRole::kWeights);
  EXPECT_EQ(w.file, "wts.bin");
  EXPECT_EQ(w.bytes, 1000U);

  std::string e = manifestErrorWith({weights.bind()});
  EXPECT_NE(e.find("stages[0].npu.arguments[7].file: 'wts.bin' is not listed under files"),
            std::string::npos)
      << e;
  e = manifestErrorWith(
      {weights.list(), weights.bind(), {"file: wts.bin}", "file: wts.bin, bytes: 1000}"}});
  EXPECT_NE(e.find("stages[0].npu.arguments[7].bytes: a weights buffer is as large as its file"),
            std::string::npos)
      << e;
  const std::string twoSizes =
      weights.listed + "    - {sha256: " + std::string(64, 'b') + ", size: 999}\n";
  e = manifestErrorWith({{"files:\n", twoSizes}, weights.bind()});
  EXPECT_NE(e.find("the accepted variants of 'wts.bin' differ in size (1000 and 999 bytes)"),
            std::string::npos)
      << e;
}

// A run must be given longer than the driver's 2 s hang timeout; 5 s unless the bundle says.
TEST(NpuManifestTest, TimeoutMustBeAboveTheDriversHangTimeout) {
  VIGIL_REQUIRE_NPU_BUNDLE();
  std::string e = manifestErrorWith("timeout_ms: 5000", "timeout_ms: 2000");
  EXPECT_NE(e.find("stages[0].npu.timeout_ms: must be above 2000 (the amdxdna driver's hang "
                   "timeout, tdr_timeout_ms)"),
            std::string::npos)
      << e;
  EXPECT_EQ(manifestErrorWith("timeout_ms: 5000", "timeout_ms: 2001"), "loaded");
  auto m = manifestWith({{"    timeout_ms: 5000\n", ""}});
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->npuStage()->npu->timeoutMs, 5000);
}

// The instruction count is the instructions file's size in words, never written down.
TEST(NpuManifestTest, InstructionCountTakesNoValue) {
  VIGIL_REQUIRE_NPU_BUNDLE();
  auto m = loadModelManifest(npuBundle());  // split-model.py writes the argument without one
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->npuStage()->npu->arguments[2].role, NpuArgRole::kInstructionCount);
  std::string e =
      manifestErrorWith("role: instruction_count}", "role: instruction_count, value: 64}");
  EXPECT_NE(e.find("stages[0].npu.arguments[2].value: the instruction count is derived from the "
                   "instructions file now"),
            std::string::npos)
      << e;
}

// YCXC8 keeps the ONNX shape; its buffer holds the channels padded up to 8 (3 -> 8 for images).
TEST(NpuManifestTest, Ycxc8TensorsTakeTheirPaddedSize) {
  VIGIL_REQUIRE_NPU_BUNDLE();
  const std::pair<std::string_view, std::string_view> blocked{
      "    - name: images\n      shape: [1, 3, 416, 416]\n      layout: NCHW",
      "    - name: images\n      shape: [1, 3, 416, 416]\n      layout: YCXC8"};
  std::string e = manifestErrorWith({blocked});
  EXPECT_NE(e.find("stages[0].npu.arguments[3].bytes: 'images' is 5537792 bytes as float32 YCXC8 "
                   "1x3x416x416, got 2076672"),
            std::string::npos)
      << e;
  EXPECT_EQ(manifestErrorWith({blocked, {"bytes: 2076672", "bytes: 5537792"}}), "loaded");
}

}  // namespace
}  // namespace vigil
