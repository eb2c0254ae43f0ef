// Every backend of the build against the OpenCV DNN reference (ncnn's test_layer idea): the
// same letterboxed real photograph in, raw outputs equal within a stated tolerance, and the
// same detections out of the whole Detector.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "daemon/commands/bench_command.h"
#include "detector/backend.h"
#include "detector/backends/onnx_focus_stem.h"
#include "detector/backends/onnx_free_size.h"
#include "detector/detector.h"
#include "detector/preprocess.h"
#include "tests/model_paths.h"
#include "tests/wait.h"

namespace vigil {
namespace {

using testing::cocoDir;
using testing::modelDir;
using testing::waitUntil;

// The raw [1, 3549, 85] output, per anchor [x, y, log w, log h, objectness, 80 class scores]:
// the network's own regression, not decoded, so the box channels are grid-cell offsets and log
// sizes of order 1 (decode multiplies by the stride, 8 to 32 px). Scores are probabilities: they
// decide what is detected, so they are held to the 1e-4 (measured over the 50
// photographs against OpenCV 4.6: objectness 1.0e-5, classes 4.4e-5, the same for ONNX Runtime
// 1.21.0, 1.23.2 and 1.30.0, whose outputs differ from each other by 9e-8 at most). Two runtimes
// summing the same ~100 convolutions in another order differ by float rounding, and that grows
// through the box regression: up to 2.2e-4 on a y offset of 1.44 cells (stride 8: 0.002 px)
// and 2.1e-4 on a log h of 1.23 (stride 16: h 54.5 px, 0.011 px), 110 of the 15 million values
// above 1e-4 even relative to max(1, |reference|) (at most 2.2e-4, an x offset at stride 16),
// all in box channels. So 1e-4 cannot hold there; box channels get 5e-4 relative to
// max(1, |reference|).
constexpr double kRawScoreTolerance = 1e-4;
constexpr double kRawBoxTolerance = 5e-4;
constexpr int kBoxChannels = 4;
constexpr float kScoreTolerance = 1e-4F;
constexpr float kBoxTolerancePx = 0.1F;

std::vector<std::string> comparedBackends() {
  std::vector<std::string> names;
  for (const BackendEntry& e : backendTable()) {
    if (e.name != "cpu" && e.name != "auto") names.emplace_back(e.name);
  }
  // cpu against itself keeps the suite non-empty in a build with the reference only, and proves
  // the reference is deterministic.
  names.emplace_back("cpu");
  return names;
}

// Skips when a backend is compiled in but cannot run on this machine (an NPU backend without
// the device): that is not a conformance failure, and the reason is printed.
#define VIGIL_CREATE_OR_SKIP(var, name, manifest, options)                             \
  auto var = createBackend(name, manifest, options);                                   \
  if (!var && (var.error().code == ErrorCode::kUnsupported ||                          \
               var.error().code == ErrorCode::kUnavailable))                           \
    GTEST_SKIP() << "backend " << name << " cannot run here: " << var.error().message; \
  ASSERT_TRUE(var.has_value()) << var.error().message

class BackendConformanceTest : public ::testing::TestWithParam<std::string> {};

TEST_P(BackendConformanceTest, RawOutputsMatchTheReferenceOnRealPhotographs) {
  VIGIL_REQUIRE_MODEL();
  VIGIL_REQUIRE_COCO();
  auto manifest = loadModelManifest(modelDir());
  ASSERT_TRUE(manifest.has_value()) << manifest.error().message;
  BackendOptions options;
  options.threads = 1;
  auto reference = createBackend("cpu", *manifest, options);
  ASSERT_TRUE(reference.has_value()) << reference.error().message;
  VIGIL_CREATE_OR_SKIP(candidate, GetParam(), *manifest, options);

  Letterbox letterbox(manifest->input);
  Tensor input;
  Tensor expected;
  Tensor actual;
  double worst[2] = {0, 0};  // box channels, score channels
  std::string worstWhere[2];
  double sumDiff = 0;
  std::size_t values = 0;
  const auto paths = testing::cocoPhotographs();
  ASSERT_GE(paths.size(), 10U);
  for (const auto& path : paths) {
    cv::Mat image = cv::imread(path.string());
    ASSERT_FALSE(image.empty()) << path;
    letterbox.run(image, input);
    ASSERT_TRUE((*reference)->infer(input, expected).has_value());
    auto ok = (*candidate)->infer(input, actual);
    ASSERT_TRUE(ok.has_value()) << ok.error().message;
    ASSERT_EQ(actual.shape, expected.shape) << path;
    const auto channels = static_cast<std::size_t>(expected.shape.back());
    for (std::size_t i = 0; i < expected.data.size(); ++i) {
      const std::size_t channel = i % channels;
      const int kind = channel < kBoxChannels ? 0 : 1;
      double ref = expected.data[i];
      double diff = std::abs(static_cast<double>(actual.data[i]) - ref);
      sumDiff += diff;
      if (kind == 0) diff /= std::max(1.0, std::abs(ref));
      if (!(diff <= worst[kind])) {  // also catches NaN
        worst[kind] = std::isnan(diff) ? INFINITY : diff;
        worstWhere[kind] = path.filename().string() + " anchor " + std::to_string(i / channels) +
                           " channel " + std::to_string(channel);
      }
    }
    values += expected.data.size();
  }
  RecordProperty("max_box_diff", std::to_string(worst[0]));
  RecordProperty("max_score_diff", std::to_string(worst[1]));
  const double meanDiff = sumDiff / static_cast<double>(values);
  std::cout << "[ measured ] " << GetParam() << " vs cpu over " << paths.size()
            << " photographs: max box diff " << worst[0] << " (" << worstWhere[0]
            << "), max score diff " << worst[1] << " (" << worstWhere[1] << "), mean abs diff "
            << meanDiff << "\n";
  EXPECT_LE(worst[1], kRawScoreTolerance) << "worst at " << worstWhere[1];
  EXPECT_LE(worst[0], kRawBoxTolerance) << "worst at " << worstWhere[0];
  EXPECT_LE(meanDiff, 1e-6) << "rounding differences are rare; this many mean a real difference";
}

TEST_P(BackendConformanceTest, SameDetectionsAsTheReference) {
  VIGIL_REQUIRE_MODEL();
  VIGIL_REQUIRE_COCO();
  DetectorOptions options;
  options.model = modelDir();
  options.threads = 1;
  auto manifest = loadModelManifest(modelDir());
  ASSERT_TRUE(manifest.has_value());
  options.classes = manifest->postprocess.classNames;  // all 80: more boxes to compare
  // The same input for every backend (cpu-ort fits its input to the picture by default; that is
  // compared in DetectorAccuracyTest.AFittedInputFindsThePersonsTheSquareOneDoes).
  options.fitInput = false;
  auto reference = Detector::create(options);
  ASSERT_TRUE(reference.has_value()) << reference.error().message;
  options.backend = GetParam();
  auto candidate = Detector::create(options);
  if (!candidate && (candidate.error().code == ErrorCode::kUnsupported ||
                     candidate.error().code == ErrorCode::kUnavailable)) {
    GTEST_SKIP() << "backend " << GetParam() << " cannot run here: " << candidate.error().message;
  }
  ASSERT_TRUE(candidate.has_value()) << candidate.error().message;

  DetectionResult expected;
  DetectionResult actual;
  std::size_t total = 0;
  for (const auto& path : testing::cocoPhotographs()) {
    cv::Mat image = cv::imread(path.string());
    ASSERT_TRUE((*reference)->detect(image, expected).has_value());
    ASSERT_TRUE((*candidate)->detect(image, actual).has_value());
    const std::string name = path.filename().string();
    ASSERT_EQ(actual.detections.size(), expected.detections.size()) << name;
    for (std::size_t i = 0; i < expected.detections.size(); ++i) {
      const Detection& e = expected.detections[i];
      const Detection& a = actual.detections[i];
      EXPECT_EQ(a.classId, e.classId) << name << " detection " << i;
      EXPECT_NEAR(a.score, e.score, kScoreTolerance) << name << " detection " << i;
      EXPECT_NEAR(a.box.x, e.box.x, kBoxTolerancePx) << name << " detection " << i;
      EXPECT_NEAR(a.box.y, e.box.y, kBoxTolerancePx) << name << " detection " << i;
      EXPECT_NEAR(a.box.width, e.box.width, kBoxTolerancePx) << name << " detection " << i;
      EXPECT_NEAR(a.box.height, e.box.height, kBoxTolerancePx) << name << " detection " << i;
    }
    total += expected.detections.size();
  }
  EXPECT_GT(total, 100U) << "too few detections to compare anything";
}

std::string testName(const ::testing::TestParamInfo<std::string>& param) {
  std::string n = param.param;
  std::replace(n.begin(), n.end(), '-', '_');
  return n;
}

INSTANTIATE_TEST_SUITE_P(EveryBackend, BackendConformanceTest,
                         ::testing::ValuesIn(comparedBackends()), testName);

bool hasBackend(std::string_view name) {
  const auto table = backendTable();
  return std::any_of(table.begin(), table.end(),
                     [&](const BackendEntry& e) { return e.name == name; });
}

TEST(BackendTableTest, AutoTakesTheFirstBackendThatLoads) {
  VIGIL_REQUIRE_MODEL();
  auto manifest = loadModelManifest(modelDir());
  ASSERT_TRUE(manifest.has_value());
  const auto table = backendTable();
  ASSERT_GE(table.size(), 2U);
  EXPECT_EQ(table.back().name, "auto");
  std::string reason = "not touched";
  auto backend = createBackend("auto", *manifest, BackendOptions{}, &reason);
  ASSERT_TRUE(backend.has_value()) << backend.error().message;
  // Whatever is preferred and fails here (an NPU without its device) is named in the reason.
  // The NPU is auto's choice only for a bundle with an NPU stage, which this model is not.
  std::string expectedName(table.front().name == "npu" ? table[1].name : table.front().name);
  if (!reason.empty()) {
    EXPECT_NE(reason.find(" failed: "), std::string::npos) << reason;
  } else {
    EXPECT_EQ((*backend)->name(), expectedName);
    if (hasBackend("cpu-ort")) {
      EXPECT_NE((*backend)->name(), "cpu");
    }
  }
}

class OrtBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!hasBackend("cpu-ort")) {
      GTEST_SKIP() << "this build has no cpu-ort: ONNX Runtime was not found when it was "
                      "configured (did scripts/fetch-onnxruntime.sh fail?)";
    }
    VIGIL_REQUIRE_MODEL();
    auto m = loadModelManifest(modelDir());
    ASSERT_TRUE(m.has_value()) << m.error().message;
    manifest_ = *m;
  }
  ModelManifest manifest_;
};

TEST_F(OrtBackendTest, DeviceSaysRuntimeVersionAndThreads) {
  BackendOptions options;
  options.threads = 2;
  auto backend = createBackend("cpu-ort", manifest_, options);
  ASSERT_TRUE(backend.has_value()) << backend.error().message;
  EXPECT_EQ((*backend)->name(), "cpu-ort");
  const std::string device = (*backend)->device();
  EXPECT_TRUE(device.starts_with("ONNX Runtime 1.")) << device;
  EXPECT_NE(device.find(" on CPU, 2 threads"), std::string::npos) << device;
  EXPECT_TRUE(device.ends_with(", the Focus stem as one convolution"))
      << "YOLOX-nano's stem fused\n"
      << device;
}

TEST_F(OrtBackendTest, InputShapeOtherThanTheManifestIsAClearError) {
  manifest_.input.anySize = false;  // the file's declared shapes, as ONNX Runtime reads them
  manifest_.stages.front().inputs.front().shape = {1, 3, 320, 320};
  auto backend = createBackend("cpu-ort", manifest_, BackendOptions{});
  ASSERT_FALSE(backend.has_value());
  EXPECT_EQ(backend.error().code, ErrorCode::kInvalidData);
  const std::string& m = backend.error().message;
  EXPECT_NE(m.find("yolox_nano.onnx (stage 'full' of "), std::string::npos) << m;
  EXPECT_NE(m.find("input 'images' has shape [1, 3, 416, 416], the manifest says [1, 3, 320, 320]"),
            std::string::npos)
      << m;
}

TEST_F(OrtBackendTest, OutputShapeOtherThanTheManifestIsAClearError) {
  manifest_.input.anySize = false;
  manifest_.stages.front().outputs.front().shape = {1, 8400, 85};
  auto backend = createBackend("cpu-ort", manifest_, BackendOptions{});
  ASSERT_FALSE(backend.has_value());
  EXPECT_NE(backend.error().message.find(
                "output 'output' has shape [1, 3549, 85], the manifest says [1, 8400, 85]"),
            std::string::npos)
      << backend.error().message;
}

TEST_F(OrtBackendTest, TensorNameNotInTheModelIsAClearError) {
  manifest_.stages.front().inputs.front().name = "image";
  auto backend = createBackend("cpu-ort", manifest_, BackendOptions{});
  ASSERT_FALSE(backend.has_value());
  EXPECT_NE(backend.error().message.find(
                "the manifest's input 'image' is not in the model, whose inputs are: images"),
            std::string::npos)
      << backend.error().message;
}

TEST_F(OrtBackendTest, FileThatIsNotAModelIsAClearError) {
  manifest_.manifestPath = std::filesystem::path(VIGIL_TEST_DATA_DIR) / "model.yaml";
  manifest_.stages.front().file = "no-such-model.onnx";
  auto backend = createBackend("cpu-ort", manifest_, BackendOptions{});
  ASSERT_FALSE(backend.has_value());
  EXPECT_NE(backend.error().message.find("no-such-model.onnx: cannot read: No such file"),
            std::string::npos)
      << backend.error().message;
  manifest_.input.anySize = false;  // and the stem not fused: ONNX Runtime reads the file itself
  BackendOptions asFile;
  asFile.fuseStem = false;
  backend = createBackend("cpu-ort", manifest_, asFile);
  ASSERT_FALSE(backend.has_value());
  EXPECT_NE(backend.error().message.find("no-such-model.onnx: ONNX Runtime cannot load this model"),
            std::string::npos)
      << backend.error().message;
}

TEST_F(OrtBackendTest, TheCallerMovingItsBuffersIsFollowed) {
  // The backend wraps the caller's tensors once; a new input tensor must be read, not the old.
  BackendOptions oneThread;
  oneThread.threads = 1;
  auto backend = createBackend("cpu-ort", manifest_, oneThread);
  ASSERT_TRUE(backend.has_value()) << backend.error().message;
  Tensor first;
  Tensor second;
  first.resize(manifest_.stages.front().inputs.front().shape);
  second.resize(first.shape);
  std::fill(first.data.begin(), first.data.end(), 114.0F);
  std::fill(second.data.begin(), second.data.end(), 0.0F);
  Tensor out;
  ASSERT_TRUE((*backend)->infer(first, out).has_value());
  std::vector<float> fromFirst = out.data;
  ASSERT_TRUE((*backend)->infer(second, out).has_value());
  EXPECT_NE(out.data, fromFirst);
  Tensor other;
  ASSERT_TRUE((*backend)->infer(first, other).has_value());
  EXPECT_EQ(other.data, fromFirst);
  Tensor wrong;
  wrong.resize({1, 3, 10, 10});
  auto bad = (*backend)->infer(wrong, out);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
}

// yolox-nano's manifest says input.any_size: the file's declared size is freed in memory, and a
// picture fitted to a multiple of 32 runs at its own size. At the declared size the outputs are
// the file's own, bit for bit: only declarations changed, no node and no weight.
TEST_F(OrtBackendTest, AModelThatTakesAnySizeRunsAFittedInputAndIsTheFileAtItsOwnSize) {
  ASSERT_TRUE(manifest_.input.anySize) << "models/yolox-nano/model.yaml sets input.any_size";
  BackendOptions oneThread;
  oneThread.threads = 1;
  auto fitted = createBackend("cpu-ort", manifest_, oneThread);
  ASSERT_TRUE(fitted.has_value()) << fitted.error().message;
  EXPECT_TRUE((*fitted)->takesAnySize());
  ModelManifest declared = manifest_;
  declared.input.anySize = false;
  auto file = createBackend("cpu-ort", declared, oneThread);
  ASSERT_TRUE(file.has_value()) << file.error().message;
  EXPECT_FALSE((*file)->takesAnySize());

  cv::Mat photo = cv::imread((testing::cocoDir() / "images/000000000139.jpg").string());
  ASSERT_FALSE(photo.empty());
  Letterbox square(manifest_.input);
  Tensor input;
  square.run(photo, input);
  Tensor fromFitted;
  Tensor fromFile;
  ASSERT_TRUE((*fitted)->infer(input, fromFitted).has_value());
  ASSERT_TRUE((*file)->infer(input, fromFile).has_value());
  EXPECT_EQ(fromFitted.shape, (std::vector<std::int64_t>{1, 3549, 85}));
  EXPECT_EQ(fromFitted.data, fromFile.data);

  Letterbox fit(manifest_.input);
  fit.setFit(32);
  fit.run(photo, input);  // 640x427: 416x277, rounded up to 416x288
  ASSERT_EQ(input.shape, (std::vector<std::int64_t>{1, 3, 288, 416}));
  ASSERT_TRUE((*fitted)->infer(input, fromFitted).has_value());
  EXPECT_EQ(fromFitted.shape, (std::vector<std::int64_t>{1, 52 * 36 + 26 * 18 + 13 * 9, 85}));
  // The file as declared refuses it; so does the fitted one a size that is not a multiple of 32.
  EXPECT_FALSE((*file)->infer(input, fromFile).has_value());
  Tensor odd;
  odd.resize({1, 3, 250, 416});
  auto refused = (*fitted)->infer(odd, fromFitted);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
}

// The stem fused (onnx_focus_stem.h) computes what the file's Slices, Concat and 3x3
// convolution do, to float rounding: on a real photograph, at the square and at a fitted size,
// every output of the network within 1e-3 of its size (7.9e-5 measured here) (objectness and class
// scores are 0 to 1, box offsets up to a few hundred pixels).
TEST_F(OrtBackendTest, TheFocusStemAsOneConvolutionGivesTheFilesOutputs) {
  BackendOptions fused;
  fused.threads = 1;
  BackendOptions asFile = fused;
  asFile.fuseStem = false;
  auto a = createBackend("cpu-ort", manifest_, fused);
  auto b = createBackend("cpu-ort", manifest_, asFile);
  ASSERT_TRUE(a.has_value()) << a.error().message;
  ASSERT_TRUE(b.has_value()) << b.error().message;
  EXPECT_TRUE((*a)->device().ends_with(", the Focus stem as one convolution")) << (*a)->device();
  EXPECT_EQ((*b)->device().find("Focus"), std::string::npos) << (*b)->device();
  cv::Mat photo = cv::imread((testing::cocoDir() / "images/000000000139.jpg").string());
  ASSERT_FALSE(photo.empty());
  for (int fit : {0, 32}) {
    Letterbox letterbox(manifest_.input);
    letterbox.setFit(fit);
    Tensor input;
    letterbox.run(photo, input);
    Tensor fromFused;
    Tensor fromFile;
    ASSERT_TRUE((*a)->infer(input, fromFused).has_value());
    ASSERT_TRUE((*b)->infer(input, fromFile).has_value());
    ASSERT_EQ(fromFused.shape, fromFile.shape);
    float worst = 0;
    for (std::size_t i = 0; i < fromFile.data.size(); ++i) {
      const float scale = std::max(1.0F, std::fabs(fromFile.data[i]));
      worst = std::max(worst, std::fabs(fromFused.data[i] - fromFile.data[i]) / scale);
    }
    EXPECT_LT(worst, 1e-3F) << "fit " << fit;
    EXPECT_NE(fromFused.data, fromFile.data) << "the same bits: was anything fused?";
    std::printf("[ measured ] the fused stem against the file's, fit %d: largest difference %.2g\n",
                fit, static_cast<double>(worst));
  }
}

TEST(OnnxFocusStemTest, AModelWithoutTheStemIsLeftAsItIs) {
  EXPECT_FALSE(fuseFocusStem("plain text, no graph").has_value());
  EXPECT_FALSE(fuseFocusStem("").has_value());
  // The head of an NPU bundle: a real ONNX model whose graph has no Focus stem.
  std::ifstream file(testing::modelDir().parent_path() / "yolox-nano-npu-float/head.onnx",
                     std::ios::binary);
  const std::string head((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(head.empty());
  EXPECT_FALSE(fuseFocusStem(head).has_value());
}

TEST(OnnxFreeSizeTest, BytesThatAreNotAModelAreAClearError) {
  auto freed = freeSpatialSize("\x0a\xff\xff\xff\xff\xff", "broken.onnx");
  ASSERT_FALSE(freed.has_value());
  EXPECT_EQ(freed.error().code, ErrorCode::kInvalidData);
  EXPECT_EQ(freed.error().message,
            "broken.onnx: not an ONNX model (its protobuf has no readable graph)");
  EXPECT_FALSE(freeSpatialSize("plain text, no graph", "text.onnx").has_value());
}

TEST_F(OrtBackendTest, AnInterruptEndsTheRunsAndEveryLaterOneFailsAtOnce) {
  // A stop cuts the inference in flight (checked between the graph's nodes) instead of waiting
  // for it: an inference takes seconds on a slow or emulated CPU.
  BackendOptions oneThread;
  oneThread.threads = 1;
  auto created = createBackend("cpu-ort", manifest_, oneThread);
  ASSERT_TRUE(created.has_value()) << created.error().message;
  InferenceBackend& backend = **created;
  Tensor input;
  input.resize(manifest_.stages.front().inputs.front().shape);
  std::fill(input.data.begin(), input.data.end(), 114.0F);
  std::atomic<int> done{0};
  std::atomic<bool> ended{false};
  std::atomic<bool> giveUp{false};  // the test's own way out if interrupt() cuts nothing
  std::string error;
  std::thread runs([&] {
    Tensor out;
    while (!giveUp) {
      auto ok = backend.infer(input, out);
      if (!ok) {
        error = ok.error().message;
        break;
      }
      ++done;
    }
    ended = true;
  });
  EXPECT_TRUE(waitUntil([&] { return done.load() > 0; }));
  backend.interrupt();
  EXPECT_TRUE(waitUntil([&] { return ended.load(); })) << "the runs go on after interrupt()";
  giveUp = true;
  runs.join();
  EXPECT_NE(error.find("terminate"), std::string::npos) << error;
  Tensor out;
  auto later = backend.infer(input, out);
  ASSERT_FALSE(later.has_value());
  EXPECT_EQ(later.error().code, ErrorCode::kBackendFailure);
}

TEST(BenchCommandTest, SeveralBackendsRunInAlternationInOneProcess) {
  VIGIL_REQUIRE_MODEL();
  VIGIL_REQUIRE_COCO();
  BenchCommandOptions options;
  options.detector.model = modelDir().string();
  const std::string second = hasBackend("cpu-ort") ? "cpu-ort" : "cpu";
  options.detector.backend = "cpu," + second;
  options.detector.threads = 1;
  options.warmup = 1;
  options.iterations = 3;
  options.json = true;
  options.paths = {(cocoDir() / "images/000000000139.jpg").string(),
                   (cocoDir() / "images/000000001000.jpg").string()};
  std::ostringstream out;
  ASSERT_EQ(runBenchCommand(options, out), 0) << out.str();
  auto j = nlohmann::json::parse(out.str());
  EXPECT_TRUE(j["alternating"].get<bool>());
  ASSERT_EQ(j["backends"].size(), 2U);
  EXPECT_EQ(j["backends"][0]["backend"], "cpu");
  EXPECT_EQ(j["backends"][1]["backend"], second);
  for (const auto& b : j["backends"]) {
    EXPECT_EQ(b["iterations"], 3);
    EXPECT_GT(b["ms"]["inference"]["median"].get<double>(), 0);
    // The process's CPU time per frame: at least some of the frame's wall time ran on a CPU.
    EXPECT_GT(b["cpu_ms_per_frame"]["mean"].get<double>(), 0);
  }
  EXPECT_GT(j["backends"][1]["inference_speedup_vs_first_median"].get<double>(), 0);

  options.detector.backend = "cpu,tpu";
  std::ostringstream bad;
  EXPECT_EQ(runBenchCommand(options, bad), 2);
}

}  // namespace
}  // namespace vigil
