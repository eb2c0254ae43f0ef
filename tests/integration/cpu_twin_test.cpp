// The CPU twin under `auto` (model.yaml `cpu_twin`): when the NPU is not in use, the CPU runs the
// float model an integer bundle was made from, not the bundle's QDQ model, after checking the
// twin's sha256 and contract. The real shipped bundles and the real float model on ONNX
// Runtime's CPU provider; the NPU is missing (a runtime whose device does not open, and this
// build's own Vitis AI runtime, which finds no Vitis AI EP in the ONNX Runtime here).
#include "detector/npu/cpu_twin.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <opencv2/imgcodecs.hpp>

#include "detector/detector.h"
#include "detector/npu/npu_backend.h"
#include "detector/preprocess.h"
#include "tests/model_paths.h"
#include "tests/temp_dir.h"

namespace vigil {
namespace {

std::filesystem::path bundleDir(const std::string& preset) {
  return std::filesystem::path(VIGIL_SOURCE_DIR) / "models" / ("yolox-nano-npu-" + preset);
}

// An NPU that is not there: the device never opens.
class NoDeviceRuntime final : public NpuRuntime {
 public:
  std::string describe() const override { return "no device"; }
  Expected<void> openDevice() override {
    return makeError(ErrorCode::kUnavailable, "injected: no NPU device");
  }
  Expected<void> load(const NpuStageSpec&, const std::filesystem::path&) override { return {}; }
  Expected<void> allocate() override { return {}; }
  std::span<std::byte> buffer(int) override { return {}; }
  Expected<void> start() override { return {}; }
  Expected<void> wait(std::chrono::milliseconds) override { return {}; }
  void unload() override {}
  void closeDevice() override {}
};

float largestDifference(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape, b.shape);
  float m = 0;
  for (std::size_t i = 0; i < std::min(a.data.size(), b.data.size()); ++i) {
    m = std::max(m, std::abs(a.data[i] - b.data[i]));
  }
  return m;
}

class CpuTwinTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    VIGIL_REQUIRE_MODEL();
    auto floatManifest = loadModelManifest(testing::modelDir());
    ASSERT_TRUE(floatManifest) << floatManifest.error().message;
    options_.threads = 1;
    auto floatCpu = createBackend("cpu-ort", *floatManifest, options_);
    ASSERT_TRUE(floatCpu) << floatCpu.error().message;
    // The canary photograph (people in a street), letterboxed as every backend gets it.
    Letterbox letterbox(floatManifest->input);
    letterbox.run(cv::imread((bundleDir("a8w8") / "canary.jpg").string()), input_);
    ASSERT_TRUE((*floatCpu)->infer(input_, floatOutput_));
    config_.runtimeFactory = [] { return std::make_unique<NoDeviceRuntime>(); };
  }

  // The bundle's own stages on cpu-ort: what `auto` ran on the CPU before the twin.
  Tensor bundleOwnOutput(const ModelManifest& bundle) {
    auto own = createBackend("cpu-ort", bundle, options_);
    EXPECT_TRUE(own) << own.error().message;
    Tensor out;
    if (own) {
      EXPECT_TRUE((*own)->infer(input_, out));
    }
    return out;
  }

  BackendOptions options_;
  NpuBackendConfig config_;
  Tensor input_;
  Tensor floatOutput_;
};

TEST_P(CpuTwinTest, WithoutTheNpuAutoAnswersWithTheFloatModel) {
  auto bundle = loadModelManifest(bundleDir(GetParam()));
  ASSERT_TRUE(bundle) << bundle.error().message;
  auto twin = loadCpuTwin(*bundle);
  ASSERT_TRUE(twin) << twin.error().message;
  EXPECT_EQ(twin->name, "yolox-nano");
  auto backend = createAutoBackend(*bundle, options_, config_);
  ASSERT_TRUE(backend) << backend.error().message;
  Tensor output;
  ASSERT_TRUE((*backend)->infer(input_, output));
  EXPECT_FALSE(npuStats().npuActive.load());
  // The float model's numbers exactly (same runtime, same file, same threads)...
  EXPECT_EQ(largestDifference(output, floatOutput_), 0.0F);
  // ...which the bundle's own stages do not give: the QDQ model differs well above that (the
  // float bundle's split differs by float rounding only).
  const float own = largestDifference(bundleOwnOutput(*bundle), floatOutput_);
  if (GetParam() != "float") {
    EXPECT_GT(own, 1e-2F) << GetParam();
  }
  std::cout << "[ measured ] " << GetParam() << ": its own stages differ from the float model by "
            << own << " at most, the twin by " << largestDifference(output, floatOutput_) << "\n";
  const std::string device = (*backend)->device();
  EXPECT_NE(device.find("CPU twin yolox-nano (sha256 checked)"), std::string::npos) << device;
  EXPECT_NE(device.find("NPU not in use: npu_unavailable"), std::string::npos) << device;
  auto sides = autoBackendSides(**backend);
  ASSERT_TRUE(sides);
  EXPECT_EQ(sides->cpuName, "cpu-ort");
  EXPECT_NE(sides->cpuDevice.find("CPU twin yolox-nano"), std::string::npos) << sides->cpuDevice;
}

INSTANTIATE_TEST_SUITE_P(ShippedModels, CpuTwinTest,
                         ::testing::Values("float", "xint8", "a8w8", "a16w8"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

// Through the facade as `vigil` builds it: this build's Vitis AI runtime finds no Vitis AI EP,
// `auto` falls back, and the persons are the float model's.
TEST(CpuTwinDetectorTest, AutoOnAnIntegerBundleFindsTheFloatModelsPersons) {
  VIGIL_REQUIRE_MODEL();
  DetectorOptions options;
  options.threads = 1;
  options.backend = "cpu-ort";
  options.model = testing::modelDir();
  // The bundle's input is the square the NPU was compiled for, and its twin answers at that size
  // (cpu-ort on the float model alone would fit its input to the photograph).
  options.fitInput = false;
  auto floatDetector = Detector::create(options);
  ASSERT_TRUE(floatDetector) << floatDetector.error().message;
  options.backend = "auto";
  options.model = bundleDir("a8w8");
  auto autoDetector = Detector::create(options);
  ASSERT_TRUE(autoDetector) << autoDetector.error().message;
  const std::string device = (*autoDetector)->backend().device();
  if (device.find("NPU not in use") == std::string::npos) {
    GTEST_SKIP() << "an NPU answers here: " << device;
  }
  EXPECT_NE(device.find("CPU twin yolox-nano"), std::string::npos) << device;
  cv::Mat photo = cv::imread((bundleDir("a8w8") / "canary.jpg").string());
  DetectionResult expected;
  DetectionResult actual;
  ASSERT_TRUE((*floatDetector)->detect(photo, expected));
  ASSERT_TRUE((*autoDetector)->detect(photo, actual));
  ASSERT_GE(expected.detections.size(), 2U);
  ASSERT_EQ(actual.detections.size(), expected.detections.size());
  for (std::size_t i = 0; i < expected.detections.size(); ++i) {
    EXPECT_EQ(actual.detections[i].score, expected.detections[i].score) << i;
    const Box& a = actual.detections[i].box;
    const Box& e = expected.detections[i].box;
    EXPECT_TRUE(a.x == e.x && a.y == e.y && a.width == e.width && a.height == e.height) << i;
  }
}

// A bundle and a twin beside it in a temporary tree, the twin changed by `change`.
class RefusedTwinTest : public CpuTwinTest {
 protected:
  void SetUp() override {
    CpuTwinTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    const auto from = bundleDir("a8w8");
    std::filesystem::create_directories(root_.path() / "bundle");
    std::filesystem::create_directories(root_.path() / "yolox-nano");
    for (const char* f : {"model.yaml", "npu.onnx", "head.onnx", "canary.jpg"}) {
      std::filesystem::copy_file(from / f, root_.path() / "bundle" / f);
    }
    for (const char* f : {"model.yaml", "yolox_nano.onnx"}) {
      std::filesystem::copy_file(testing::modelDir() / f, root_.path() / "yolox-nano" / f);
    }
  }

  std::filesystem::path twinFile(const char* name) { return root_.path() / "yolox-nano" / name; }

  // `auto` on the bundle: the twin refused with a reason containing `why`, the bundle's own
  // stages answering.
  void expectRefused(const std::string& why) {
    auto bundle = loadModelManifest(root_.path() / "bundle");
    ASSERT_TRUE(bundle) << bundle.error().message;
    auto twin = loadCpuTwin(*bundle);
    ASSERT_FALSE(twin);
    EXPECT_NE(twin.error().message.find(why), std::string::npos) << twin.error().message;
    auto backend = createAutoBackend(*bundle, options_, config_);
    ASSERT_TRUE(backend) << backend.error().message;
    Tensor output;
    ASSERT_TRUE((*backend)->infer(input_, output));
    EXPECT_EQ(largestDifference(output, bundleOwnOutput(*bundle)), 0.0F);
    EXPECT_GT(largestDifference(output, floatOutput_), 1e-2F);
    const std::string device = (*backend)->device();
    EXPECT_NE(device.find("the bundle's own stages (CPU twin refused)"), std::string::npos)
        << device;
  }

  TempDir root_;
};

TEST_F(RefusedTwinTest, AnIntactTwinBesideTheBundleIsTaken) {
  auto bundle = loadModelManifest(root_.path() / "bundle");
  ASSERT_TRUE(bundle) << bundle.error().message;
  auto twin = loadCpuTwin(*bundle);
  ASSERT_TRUE(twin) << twin.error().message;
  EXPECT_EQ(twin->directory(), root_.path() / "yolox-nano");
}

TEST_F(RefusedTwinTest, ATwinWhoseSha256DiffersIsRefused) {
  std::ofstream(twinFile("yolox_nano.onnx"), std::ios::app | std::ios::binary) << '\0';
  expectRefused(
      "is not the 695e750a5d5754bb5a8d5325643b59282191a7e7a564e435a415fd3c578eab14 the "
      "bundle's cpu_twin pins");
}

TEST_F(RefusedTwinTest, AMissingTwinIsRefused) {
  std::filesystem::remove(twinFile("yolox_nano.onnx"));
  expectRefused("yolox_nano.onnx: missing (fetch it with `fetch-model.sh");
}

TEST_F(RefusedTwinTest, ATwinWithOtherClassesIsRefused) {
  std::ifstream in(twinFile("model.yaml"));
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  in.close();
  text.replace(text.find("toothbrush"), 10, "tooth brush");
  std::ofstream(twinFile("model.yaml")) << text;
  expectRefused("its postprocess (type, strides, score activation or class names) differs");
}

}  // namespace
}  // namespace vigil
