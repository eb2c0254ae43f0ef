// The NPU stage's canary without an NPU: what prepare() reads from a bundle (files in device
// format, or a photograph) and what judge() holds the NPU's outputs to (the test's numbers).
#include "detector/npu/npu_canary.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <opencv2/imgcodecs.hpp>

#include "tests/temp_dir.h"

namespace vigil {
namespace {

// A CPU reference that answers `value` in every output and keeps what it was given.
class ConstantStage final : public CpuStage {
 public:
  ConstantStage(const StageSpec& spec, float value) : spec_(spec), value_(value) {}

  Expected<void> run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    seen.assign(inputs.begin(), inputs.end());
    for (Tensor& out : outputs) std::fill(out.data.begin(), out.data.end(), value_);
    return {};
  }
  const StageSpec& spec() const override { return spec_; }

  std::vector<Tensor> seen;

 private:
  const StageSpec& spec_;
  float value_;
};

void writeFloats(const std::filesystem::path& path, const std::vector<float>& values) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(values.data()),
             static_cast<std::streamsize>(values.size() * sizeof(float)));
}

Tensor tensorOf(std::vector<float> values) {
  Tensor t;
  t.name = "out";
  t.resize({1, 1, 2, 2});
  t.data = std::move(values);
  return t;
}

// A bundle in a temporary directory: one NPU stage, float32 NCHW [1, 1, 2, 2] in and out (a
// photograph canary: [1, 3, 32, 32] in).
class NpuCanaryTest : public ::testing::Test {
 protected:
  NpuCanaryTest() {
    manifest_.manifestPath = dir_.path() / "model.yaml";
    manifest_.input.width = 32;
    manifest_.input.height = 32;
    stage_.name = "backbone";
    stage_.inputs = {TensorSpec{"images", {1, 1, 2, 2}, "NCHW", "float32"}};
    stage_.outputs = {TensorSpec{"out", {1, 1, 2, 2}, "NCHW", "float32"}};
    NpuStageSpec npu;
    npu.inputs = {DeviceTensorSpec{"images", {1, 1, 2, 2}, "NCHW", "float32"}};
    npu.outputs = {DeviceTensorSpec{"out", {1, 1, 2, 2}, "NCHW", "float32"}};
    npu.canaryInput = "canary_in.bin";
    npu.canaryExpected = "canary_out.bin";
    npu.canaryTolerance = 1e-3F;
    stage_.npu = npu;
    writeFloats(dir_.path() / "canary_in.bin", {1, 2, 3, 4});
    writeFloats(dir_.path() / "canary_out.bin", {0.5F, 0.5F, 0.5F, 0.5F});
  }

  void usePhotograph(const std::string& file) {
    stage_.inputs = {TensorSpec{"images", {1, 3, 32, 32}, "NCHW", "float32"}};
    stage_.npu->canaryImage = file;
    stage_.npu->canaryInput.clear();
    stage_.npu->canaryExpected.clear();
  }

  TempDir dir_;
  ModelManifest manifest_;
  StageSpec stage_;
};

TEST_F(NpuCanaryTest, FilesGiveTheirInputsTheExpectedOutputsAndTheReferenceOnThoseInputs) {
  ConstantStage reference(stage_, 0.5F);
  NpuCanary canary(manifest_, stage_, reference);
  EXPECT_FALSE(canary.fromImage());
  auto trial = canary.prepare();
  ASSERT_TRUE(trial) << trial.error().message;
  ASSERT_EQ(trial->inputs.size(), 1U);
  EXPECT_EQ(trial->inputs[0].data, (std::vector<float>{1, 2, 3, 4}));
  ASSERT_EQ(reference.seen.size(), 1U);
  EXPECT_EQ(reference.seen[0].data, (std::vector<float>{1, 2, 3, 4}));
  ASSERT_EQ(trial->expected.size(), 1U);
  EXPECT_EQ(trial->expected[0].data, (std::vector<float>(4, 0.5F)));
  ASSERT_EQ(trial->reference.size(), 1U);
  EXPECT_EQ(trial->reference[0].data, (std::vector<float>(4, 0.5F)));
}

TEST_F(NpuCanaryTest, TheNpuMustAgreeWithBothTheExpectedOutputAndTheReference) {
  ConstantStage reference(stage_, 0.5F);
  NpuCanary canary(manifest_, stage_, reference);
  auto trial = canary.prepare();
  ASSERT_TRUE(trial) << trial.error().message;
  const std::vector<Tensor> right{tensorOf({0.5F, 0.5F, 0.5F, 0.5004F})};
  EXPECT_TRUE(canary.judge(*trial, right));

  const std::vector<Tensor> wrong{tensorOf({0.5F, 0.5F, 0.6F, 0.5F})};
  auto judged = canary.judge(*trial, wrong);
  ASSERT_FALSE(judged);
  EXPECT_EQ(judged.error().code, ErrorCode::kInvalidOutput);
  EXPECT_NE(judged.error().message.find("output 'out'"), std::string::npos);
  EXPECT_NE(judged.error().message.find("to the bundle's expected output"), std::string::npos);

  // The expected output alone is not enough: a reference elsewhere fails the NPU too.
  ConstantStage elsewhere(stage_, 0.7F);
  NpuCanary disagreeing(manifest_, stage_, elsewhere);
  auto other = disagreeing.prepare();
  ASSERT_TRUE(other);
  EXPECT_FALSE(disagreeing.judge(*other, right));
}

TEST_F(NpuCanaryTest, AnIntegerOutputMayBeHalfAStepFurtherFromTheReference) {
  stage_.npu->outputs[0].dtype = "int8";
  stage_.npu->outputs[0].scale = 0.1F;
  std::ofstream(dir_.path() / "canary_out.bin", std::ios::binary).write("\x05\x05\x05\x05", 4);
  ConstantStage reference(stage_, 0.54F);
  NpuCanary canary(manifest_, stage_, reference);
  auto trial = canary.prepare();
  ASSERT_TRUE(trial) << trial.error().message;
  // 0.5 dequantized: 0.04 from the reference, within 1e-3 + 0.05.
  EXPECT_TRUE(canary.judge(*trial, std::vector<Tensor>{tensorOf(std::vector<float>(4, 0.5F))}));
}

TEST_F(NpuCanaryTest, FilesWithoutAnExpectedOutputAreNotTrusted) {
  stage_.npu->canaryExpected.clear();
  ConstantStage reference(stage_, 0.5F);
  auto trial = NpuCanary(manifest_, stage_, reference).prepare();
  ASSERT_FALSE(trial);
  EXPECT_EQ(trial.error().code, ErrorCode::kInvalidData);
  EXPECT_NE(trial.error().message.find("the canary has no expected output"), std::string::npos);
  EXPECT_TRUE(reference.seen.empty());
}

TEST_F(NpuCanaryTest, AFileTooShortForItsTensorsSaysSo) {
  writeFloats(dir_.path() / "canary_in.bin", {1, 2});
  ConstantStage reference(stage_, 0.5F);
  auto trial = NpuCanary(manifest_, stage_, reference).prepare();
  ASSERT_FALSE(trial);
  EXPECT_EQ(trial.error().code, ErrorCode::kInvalidData);
  EXPECT_NE(trial.error().message.find("canary_in.bin: 8 bytes, the npu inputs need 16"),
            std::string::npos)
      << trial.error().message;
}

TEST_F(NpuCanaryTest, APhotographIsLetterboxedAndHeldToTheReferenceOnly) {
  cv::imwrite((dir_.path() / "canary.png").string(),
              cv::Mat(20, 40, CV_8UC3, cv::Scalar(9, 99, 199)));
  usePhotograph("canary.png");
  ConstantStage reference(stage_, 0.5F);
  NpuCanary canary(manifest_, stage_, reference);
  EXPECT_TRUE(canary.fromImage());
  auto trial = canary.prepare();
  ASSERT_TRUE(trial) << trial.error().message;
  ASSERT_EQ(trial->inputs.size(), 1U);
  EXPECT_EQ(trial->inputs[0].shape, (std::vector<std::int64_t>{1, 3, 32, 32}));
  EXPECT_TRUE(trial->expected.empty());
  EXPECT_TRUE(canary.judge(*trial, std::vector<Tensor>{tensorOf(std::vector<float>(4, 0.5F))}));

  auto judged = canary.judge(*trial, std::vector<Tensor>{tensorOf({0.5F, 0.5F, 0.5F, 0.3F})});
  ASSERT_FALSE(judged);
  EXPECT_EQ(judged.error().code, ErrorCode::kInvalidOutput);
  EXPECT_NE(judged.error().message.find("output 'out' for canary.png"), std::string::npos)
      << judged.error().message;
}

TEST_F(NpuCanaryTest, APhotographOpenCvCannotReadIsRefusedNamingIt) {
  std::ofstream(dir_.path() / "canary.png") << "not a picture";
  usePhotograph("canary.png");
  ConstantStage reference(stage_, 0.5F);
  auto trial = NpuCanary(manifest_, stage_, reference).prepare();
  ASSERT_FALSE(trial);
  EXPECT_EQ(trial.error().code, ErrorCode::kInvalidData);
  EXPECT_NE(trial.error().message.find("canary.png: not an image OpenCV can read"),
            std::string::npos);
}

}  // namespace
}  // namespace vigil
