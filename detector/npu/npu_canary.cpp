#include "detector/npu/npu_canary.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <opencv2/imgcodecs.hpp>
#include <string>
#include <string_view>

#include "detector/npu/device_tensor.h"
#include "detector/npu/npu_stage.h"
#include "detector/preprocess.h"
#include "detector/verify.h"

namespace vigil {

namespace {

// A canary file (`file`): the device-format buffers of `devices` back to back, in tensor order,
// unpacked into tensors shaped as `tensors`. `what` ("inputs", "outputs") names them in the
// message when the file is too short.
Expected<std::vector<Tensor>> unpackCanaryFile(const std::vector<std::byte>& bytes,
                                               const std::string& file,
                                               const std::vector<DeviceTensorSpec>& devices,
                                               const std::vector<TensorSpec>& tensors,
                                               std::string_view what) {
  std::vector<Tensor> out;
  std::size_t offset = 0;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    out.push_back(zeroTensor(tensors[i]));
    const std::size_t n = devices[i].byteSize();
    if (offset + n > bytes.size()) {
      return makeError(ErrorCode::kInvalidData, "{}: {} bytes, the npu {} need {}", file,
                       bytes.size(), what, offset + n);
    }
    if (auto ok = unpackTensor(std::span(bytes).subspan(offset, n), devices[i], out[i]); !ok) {
      return tl::unexpected(ok.error());
    }
    offset += n;
  }
  return out;
}

}  // namespace

NpuCanary::NpuCanary(const ModelManifest& manifest, const StageSpec& stage, CpuStage& reference)
    : manifest_(manifest), stage_(stage), spec_(*stage.npu), reference_(reference) {}

Expected<CanaryTrial> NpuCanary::prepare() const {
  return fromImage() ? prepareImage() : prepareFiles();
}

Expected<void> NpuCanary::judge(const CanaryTrial& trial,
                                std::span<const Tensor> npuOutputs) const {
  return fromImage() ? judgeAgainstReference(trial, npuOutputs)
                     : judgeAgainstFiles(trial, npuOutputs);
}

Expected<CanaryTrial> NpuCanary::prepareFiles() const {
  if (spec_.canaryExpected.empty()) {
    return makeError(ErrorCode::kInvalidData,
                     "{}: the canary has no expected output; an NPU stage without one cannot be "
                     "trusted",
                     manifest_.manifestPath.string());
  }
  auto in = readBytes(manifest_.directory() / spec_.canaryInput);
  auto expected = readBytes(manifest_.directory() / spec_.canaryExpected);
  if (!in) return tl::unexpected(in.error());
  if (!expected) return tl::unexpected(expected.error());
  CanaryTrial trial;
  auto inputs = unpackCanaryFile(*in, spec_.canaryInput, spec_.inputs, stage_.inputs, "inputs");
  if (!inputs) return tl::unexpected(inputs.error());
  trial.inputs = std::move(*inputs);
  auto want =
      unpackCanaryFile(*expected, spec_.canaryExpected, spec_.outputs, stage_.outputs, "outputs");
  if (!want) return tl::unexpected(want.error());
  trial.expected = std::move(*want);
  auto reference = referenceOn(trial.inputs);
  if (!reference) return tl::unexpected(reference.error());
  trial.reference = std::move(*reference);
  return trial;
}

Expected<CanaryTrial> NpuCanary::prepareImage() const {
  const std::filesystem::path path = manifest_.directory() / spec_.canaryImage;
  cv::Mat image = cv::imread(path.string(), cv::IMREAD_COLOR);
  if (image.empty()) {
    return makeError(ErrorCode::kInvalidData, "{}: not an image OpenCV can read", path.string());
  }
  CanaryTrial trial;
  trial.inputs.push_back(zeroTensor(stage_.inputs.front()));
  Letterbox(manifest_.input).run(image, trial.inputs.front());
  auto reference = referenceOn(trial.inputs);
  if (!reference) return tl::unexpected(reference.error());
  trial.reference = std::move(*reference);
  return trial;
}

Expected<std::vector<Tensor>> NpuCanary::referenceOn(const std::vector<Tensor>& inputs) const {
  std::vector<Tensor> outputs;
  for (const TensorSpec& t : stage_.outputs) outputs.push_back(zeroTensor(t));
  if (auto ok = reference_.run(inputs, outputs); !ok) return tl::unexpected(ok.error());
  return outputs;
}

Expected<void> NpuCanary::judgeAgainstFiles(const CanaryTrial& trial,
                                            std::span<const Tensor> npuOutputs) const {
  for (std::size_t i = 0; i < npuOutputs.size(); ++i) {
    float toExpected = maxAbsDiff(npuOutputs[i].values(), trial.expected[i].values());
    float toCpu = maxAbsDiff(npuOutputs[i].values(), trial.reference[i].values());
    // A quantized output can differ from the float CPU reference by half a step more.
    float cpuTolerance =
        spec_.canaryTolerance +
        0.5F * spec_.outputs[i].scale *
            (spec_.outputs[i].dtype == "float32" || spec_.outputs[i].dtype == "bf16" ? 0.0F : 1.0F);
    if (!(toExpected <= spec_.canaryTolerance) || !(toCpu <= cpuTolerance)) {
      return makeError(ErrorCode::kInvalidOutput,
                       "NPU canary failed on output '{}': max abs diff {} to the bundle's "
                       "expected output and {} to the CPU reference (tolerance {}); the NPU "
                       "returns wrong results",
                       spec_.outputs[i].name, toExpected, toCpu, spec_.canaryTolerance);
    }
    npuLog()->debug("npu: canary output '{}' within tolerance ({} to expected, {} to CPU)",
                    spec_.outputs[i].name, toExpected, toCpu);
  }
  return {};
}

Expected<void> NpuCanary::judgeAgainstReference(const CanaryTrial& trial,
                                                std::span<const Tensor> npuOutputs) const {
  for (std::size_t i = 0; i < npuOutputs.size(); ++i) {
    const float diff = maxAbsDiff(npuOutputs[i].values(), trial.reference[i].values());
    if (!(diff <= spec_.canaryTolerance)) {
      return makeError(ErrorCode::kInvalidOutput,
                       "NPU canary failed on output '{}' for {}: max abs diff {} to the CPU "
                       "reference (tolerance {}); the NPU returns wrong results",
                       spec_.outputs[i].name, spec_.canaryImage, diff, spec_.canaryTolerance);
    }
    npuLog()->debug("npu: canary output '{}' within tolerance ({} to CPU)", spec_.outputs[i].name,
                    diff);
  }
  return {};
}

}  // namespace vigil
