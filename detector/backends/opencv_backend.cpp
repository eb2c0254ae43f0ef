#include "detector/backends/opencv_backend.h"

#include <fmt/format.h>

#include <map>
#include <opencv2/core/utility.hpp>
#include <opencv2/dnn.hpp>

namespace vigil {

namespace {

// An ONNX file on OpenCV's own CPU implementation, as every reference stage runs.
Expected<cv::dnn::Net> loadOnnxNet(const std::string& path) {
  cv::dnn::Net net;
  try {
    net = cv::dnn::readNetFromONNX(path);
    net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
    net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
  } catch (const cv::Exception& e) {
    return makeError(ErrorCode::kInvalidData, "{}: OpenCV cannot load this ONNX model: {}", path,
                     e.what());
  }
  if (net.empty()) {
    return makeError(ErrorCode::kInvalidData, "{}: OpenCV loaded an empty network", path);
  }
  return net;
}

struct Stage {
  const StageSpec* spec = nullptr;
  cv::dnn::Net net;
  std::vector<cv::String> outputNames;
  std::vector<cv::Mat> outputs;  // reused across calls: forward() copies into them
};

class OpenCvBackend final : public InferenceBackend {
 public:
  OpenCvBackend(std::vector<Stage> stages, int threads)
      : stages_(std::move(stages)), threads_(threads) {}

  std::string_view name() const override { return "cpu"; }

  std::string device() const override {
    return fmt::format("OpenCV DNN {} on CPU, {} thread(s)", CV_VERSION, threads_);
  }

  Expected<void> infer(const Tensor& input, Tensor& output) override {
    try {
      std::vector<int> dims(input.shape.begin(), input.shape.end());
      // A header over the caller's tensor: setInput copies it into the network's own blob.
      cv::Mat in(static_cast<int>(dims.size()), dims.data(), CV_32F,
                 const_cast<float*>(input.data.data()));
      Stage& first = stages_.front();
      first.net.setInput(in, first.spec->inputs.front().name);
      for (std::size_t i = 0; i < stages_.size(); ++i) {
        Stage& stage = stages_[i];
        if (i > 0) {
          const Stage& prev = stages_[i - 1];
          for (const TensorSpec& t : stage.spec->inputs) {
            const cv::Mat* value = nullptr;
            for (std::size_t k = 0; k < prev.outputNames.size(); ++k) {
              if (prev.outputNames[k] == t.name) value = &prev.outputs[k];
            }
            if (value == nullptr) {
              return makeError(ErrorCode::kBackendFailure,
                               "stage '{}' needs tensor '{}', which stage '{}' does not produce",
                               stage.spec->name, t.name, prev.spec->name);
            }
            stage.net.setInput(*value, t.name);
          }
        }
        stage.net.forward(stage.outputs, stage.outputNames);
      }
      const cv::Mat& result = stages_.back().outputs.front();
      const TensorSpec& spec = stages_.back().spec->outputs.front();
      if (result.total() != static_cast<std::size_t>(spec.elementCount()) ||
          result.type() != CV_32F || !result.isContinuous()) {
        return makeError(ErrorCode::kInvalidOutput,
                         "stage '{}' output '{}' has {} elements of type {}, the manifest says {}",
                         stages_.back().spec->name, spec.name, result.total(), result.type(),
                         spec.elementCount());
      }
      if (output.shape != spec.shape) output.resize(spec.shape);
      output.name = spec.name;
      std::copy_n(result.ptr<float>(), output.data.size(), output.data.data());
      return {};
    } catch (const cv::Exception& e) {
      return makeError(ErrorCode::kBackendFailure, "OpenCV DNN: {}", e.what());
    }
  }

 private:
  std::vector<Stage> stages_;
  int threads_;
};

}  // namespace

Expected<std::unique_ptr<InferenceBackend>> createOpenCvBackend(const ModelManifest& manifest,
                                                                const BackendOptions& options) {
  if (manifest.quantization && manifest.quantization->isInteger()) {
    // OpenCV 4.6 asserts on a DequantizeLinear of constant weights: say why before it does.
    return makeError(ErrorCode::kUnsupported,
                     "the cpu backend (OpenCV DNN) cannot run {} ({} quantized, QDQ); use "
                     "--backend cpu-ort",
                     manifest.name, manifest.quantization->preset);
  }
  if (options.threads > 0) cv::setNumThreads(options.threads);
  int threads = cv::getNumThreads();
  std::vector<Stage> stages;
  for (const StageSpec& spec : manifest.stages) {
    if (spec.runtime != "onnx") {
      return makeError(ErrorCode::kUnsupported,
                       "the cpu backend cannot run stage '{}' (runtime {})", spec.name,
                       spec.runtime);
    }
    std::string path = (manifest.directory() / spec.file).string();
    auto net = loadOnnxNet(path);
    if (!net) return tl::unexpected(net.error());
    Stage stage;
    stage.spec = &spec;
    stage.net = std::move(*net);
    for (const TensorSpec& t : spec.outputs) stage.outputNames.emplace_back(t.name);
    stages.push_back(std::move(stage));
  }
  return std::make_unique<OpenCvBackend>(std::move(stages), threads);
}

struct OnnxStage::Impl {
  cv::dnn::Net net;
  std::vector<cv::String> outputNames;
  std::vector<cv::Mat> outputs;
};

OnnxStage::OnnxStage(StageSpec spec, std::unique_ptr<Impl> impl)
    : spec_(std::move(spec)), impl_(std::move(impl)) {}
OnnxStage::~OnnxStage() = default;

Expected<std::unique_ptr<OnnxStage>> OnnxStage::load(const std::filesystem::path& file,
                                                     const StageSpec& spec) {
  auto net = loadOnnxNet(file.string());
  if (!net) return tl::unexpected(net.error());
  auto impl = std::make_unique<Impl>();
  impl->net = std::move(*net);
  for (const TensorSpec& t : spec.outputs) impl->outputNames.emplace_back(t.name);
  return std::unique_ptr<OnnxStage>(new OnnxStage(spec, std::move(impl)));
}

Expected<void> OnnxStage::run(std::span<const Tensor> inputs, std::span<Tensor> outputs) {
  if (inputs.size() != spec_.inputs.size() || outputs.size() != spec_.outputs.size()) {
    return makeError(ErrorCode::kInvalidArgument, "stage '{}' takes {} inputs and {} outputs",
                     spec_.name, spec_.inputs.size(), spec_.outputs.size());
  }
  try {
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      std::vector<int> dims(inputs[i].shape.begin(), inputs[i].shape.end());
      cv::Mat in(static_cast<int>(dims.size()), dims.data(), CV_32F,
                 const_cast<float*>(inputs[i].data.data()));
      impl_->net.setInput(in, spec_.inputs[i].name);
    }
    impl_->net.forward(impl_->outputs, impl_->outputNames);
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      const cv::Mat& result = impl_->outputs[i];
      const TensorSpec& t = spec_.outputs[i];
      // An output without a shape in the spec takes the network's (stage-run's case).
      std::vector<std::int64_t> shape = t.shape;
      if (shape.empty()) {
        for (int d = 0; d < result.dims; ++d) shape.push_back(result.size[d]);
      }
      std::int64_t count = 1;
      for (std::int64_t d : shape) count *= d;
      if (result.total() != static_cast<std::size_t>(count) || result.type() != CV_32F ||
          !result.isContinuous()) {
        return makeError(ErrorCode::kInvalidOutput,
                         "stage '{}' output '{}' has {} elements, the manifest says {}", spec_.name,
                         t.name, result.total(), count);
      }
      if (outputs[i].shape != shape) outputs[i].resize(shape);
      outputs[i].name = t.name;
      std::copy_n(result.ptr<float>(), outputs[i].data.size(), outputs[i].data.data());
    }
    return {};
  } catch (const cv::Exception& e) {
    return makeError(ErrorCode::kBackendFailure, "OpenCV DNN, stage '{}': {}", spec_.name,
                     e.what());
  }
}

}  // namespace vigil
