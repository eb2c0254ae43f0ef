#include "detector/npu/cpu_twin.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "detector/npu/npu_stage.h"

namespace vigil {

namespace {

// What the Detector around the backend relies on: the letterbox it feeds and the decode it
// applies are the bundle's, so the twin must take and give exactly those.
Expected<void> checkSameContract(const ModelManifest& bundle, const ModelManifest& twin) {
  const InputSpec& a = bundle.input;
  const InputSpec& b = twin.input;
  if (a.width != b.width || a.height != b.height) {
    return makeError(ErrorCode::kInvalidData, "its input is {}x{}, the bundle's {}x{}", b.width,
                     b.height, a.width, a.height);
  }
  if (a.channelOrder != b.channelOrder || a.valueMin != b.valueMin || a.valueMax != b.valueMax ||
      a.padValue != b.padValue) {
    return makeError(ErrorCode::kInvalidData,
                     "its input channel order, value range or letterbox padding differs from the "
                     "bundle's");
  }
  const TensorSpec& out = twin.stages.back().outputs.front();
  const TensorSpec& expected = bundle.stages.back().outputs.front();
  if (out.shape != expected.shape || out.layout != expected.layout) {
    return makeError(ErrorCode::kInvalidData, "its output is [{}] {}, the bundle's [{}] {}",
                     fmt::join(out.shape, ", "), out.layout, fmt::join(expected.shape, ", "),
                     expected.layout);
  }
  const PostprocessSpec& p = bundle.postprocess;
  const PostprocessSpec& q = twin.postprocess;
  if (p.type != q.type || p.strides != q.strides || p.scoresActivated != q.scoresActivated ||
      p.classNames != q.classNames) {
    return makeError(ErrorCode::kInvalidData,
                     "its postprocess (type, strides, score activation or class names) differs "
                     "from the bundle's");
  }
  return {};
}

// The twin's ONNX file against the bundle's pin: a regular file whose sha256 is the pinned one.
Expected<void> checkPinnedFile(const ModelManifest& twin, const CpuTwinSpec& pin) {
  const std::filesystem::path file = twin.directory() / twin.stages.front().file;
  std::error_code ec;
  const auto status = std::filesystem::status(file, ec);
  if (!std::filesystem::exists(status)) {
    return makeError(ErrorCode::kNotFound,
                     "{}: missing (fetch it with `fetch-model.sh --model {}`: scripts/ in the "
                     "source tree, /usr/share/vigil/ when installed)",
                     file.string(), twin.directory().string());
  }
  if (!std::filesystem::is_regular_file(status)) {
    return makeError(ErrorCode::kInvalidData, "{}: not a regular file", file.string());
  }
  auto hash = sha256File(file);
  if (!hash) return tl::unexpected(hash.error());
  if (*hash != pin.sha256) {
    return makeError(ErrorCode::kUnverifiedModel,
                     "{}: sha256 {} is not the {} the bundle's cpu_twin pins (not the float model "
                     "the bundle was made from)",
                     file.string(), *hash, pin.sha256);
  }
  return {};
}

// Reports the model that answers in device().
class CpuSide final : public InferenceBackend {
 public:
  CpuSide(std::unique_ptr<InferenceBackend> inner, std::string model)
      : inner_(std::move(inner)), model_(std::move(model)) {}

  std::string_view name() const override { return inner_->name(); }
  std::string device() const override { return fmt::format("{}, {}", inner_->device(), model_); }
  Expected<void> infer(const Tensor& input, Tensor& output) override {
    return inner_->infer(input, output);
  }
  void interrupt() override { inner_->interrupt(); }

 private:
  std::unique_ptr<InferenceBackend> inner_;
  std::string model_;
};

}  // namespace

Expected<ModelManifest> loadCpuTwin(const ModelManifest& bundle) {
  if (!bundle.cpuTwin) {
    return makeError(ErrorCode::kNotFound, "{}: names no cpu_twin", bundle.manifestPath.string());
  }
  const CpuTwinSpec& pin = *bundle.cpuTwin;
  const std::filesystem::path dir = (bundle.directory() / pin.model).lexically_normal();
  auto twin = loadModelManifest(dir);
  if (!twin) return tl::unexpected(twin.error());
  if (twin->stages.size() != 1 || twin->npuStage() != nullptr) {
    return makeError(ErrorCode::kInvalidData,
                     "{}: a CPU twin is one ONNX stage with no NPU section, this has {} stage(s)",
                     twin->manifestPath.string(), twin->stages.size());
  }
  if (twin->quantization && twin->quantization->isInteger()) {
    return makeError(ErrorCode::kInvalidData, "{}: a CPU twin is a float model, this is {}",
                     twin->manifestPath.string(), twin->quantization->preset);
  }
  if (auto ok = checkSameContract(bundle, *twin); !ok) {
    return makeError(ErrorCode::kInvalidData, "{}: {}", twin->manifestPath.string(),
                     ok.error().message);
  }
  if (auto ok = checkPinnedFile(*twin, pin); !ok) return tl::unexpected(ok.error());
  return twin;
}

Expected<std::unique_ptr<InferenceBackend>> createAutoCpuSide(const ModelManifest& bundle,
                                                              const BackendOptions& options) {
  if (!bundle.cpuTwin) return createCpuBackend(bundle, options);
  auto twin = loadCpuTwin(bundle);
  std::string refused;
  if (twin) {
    auto cpu = createCpuBackend(*twin, options);
    if (cpu) {
      npuLog()->info("auto: the CPU answers with the CPU twin {} ({}, sha256 {} checked)",
                     twin->name, twin->directory().string(), bundle.cpuTwin->sha256);
      return std::unique_ptr<InferenceBackend>(std::make_unique<CpuSide>(
          std::move(*cpu), fmt::format("CPU twin {} (sha256 checked)", twin->name)));
    }
    refused = cpu.error().message;
  } else {
    refused = twin.error().message;
  }
  npuLog()->warn("auto: the CPU twin of {} is refused: {}; the CPU runs the bundle's own stages",
                 bundle.name, refused);
  auto cpu = createCpuBackend(bundle, options);
  if (!cpu) return cpu;
  return std::unique_ptr<InferenceBackend>(
      std::make_unique<CpuSide>(std::move(*cpu), "the bundle's own stages (CPU twin refused)"));
}

}  // namespace vigil
