#include "detector/backends/opencv_backend.h"

#include <fmt/format.h>

#include <map>
#include <opencv2/core/utility.hpp>
#include <opencv2/dnn.hpp>

namespace vigil {

namespace {

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
    Stage stage;
    stage.spec = &spec;
    try {
      stage.net = cv::dnn::readNetFromONNX(path);
      stage.net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
      stage.net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
    } catch (const cv::Exception& e) {
      return makeError(ErrorCode::kInvalidData, "{}: OpenCV cannot load this ONNX model: {}", path,
                       e.what());
    }
    if (stage.net.empty()) {
      return makeError(ErrorCode::kInvalidData, "{}: OpenCV loaded an empty network", path);
    }
    for (const TensorSpec& t : spec.outputs) stage.outputNames.emplace_back(t.name);
    stages.push_back(std::move(stage));
  }
  return std::make_unique<OpenCvBackend>(std::move(stages), threads);
}

}  // namespace vigil
