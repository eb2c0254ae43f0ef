#include "detector/backends/ort_backend.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnxruntime_cxx_api.h>
#include <onnxruntime_session_options_config_keys.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <thread>

#include "detector/backends/onnx_focus_stem.h"
#include "detector/backends/onnx_free_size.h"
#include "detector/backends/ort_session_options.h"
#include "detector/npu/ort_log.h"

namespace vigil {

namespace {

// The C++ API is built with ORT_API_MANUAL_INIT (see cmake/onnxruntime.cmake): nothing of ONNX
// Runtime runs before the first backend is created, and a runtime library older than the headers
// is an error message instead of a null-pointer crash at static initialisation.
Expected<const OrtApi*> ortApi() {
  static std::once_flag once;
  static const OrtApi* api = nullptr;
  std::call_once(once, [] {
    api = OrtGetApiBase()->GetApi(ORT_API_VERSION);
    if (api != nullptr) Ort::InitApi(api);
  });
  if (api == nullptr) {
    return makeError(ErrorCode::kUnsupported,
                     "the ONNX Runtime library loaded ({}) does not support C API version {}, "
                     "which this build was compiled against (ONNX Runtime 1.{} or newer needed)",
                     OrtGetApiBase()->GetVersionString(), ORT_API_VERSION, ORT_API_VERSION);
  }
  return api;
}

// One environment per process, as ONNX Runtime recommends; sessions hold it alive.
Expected<std::shared_ptr<Ort::Env>> sharedEnv() {
  if (auto api = ortApi(); !api) return tl::unexpected(api.error());
  static std::mutex mutex;
  static std::weak_ptr<Ort::Env> weak;
  std::lock_guard lock(mutex);
  if (auto env = weak.lock()) return env;
  auto env = std::make_shared<Ort::Env>(ORT_LOGGING_LEVEL_WARNING, "vigil", logOrtMessage,
                                        const_cast<char*>("detector"));
  weak = env;
  return env;
}

std::string shapeText(const std::vector<std::int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

// The manifest's shape against the model's, where -1 (a dynamic dimension) matches anything.
bool shapeMatches(const std::vector<std::int64_t>& manifest,
                  const std::vector<std::int64_t>& model) {
  if (manifest.size() != model.size()) return false;
  for (std::size_t i = 0; i < model.size(); ++i) {
    if (model[i] >= 0 && model[i] != manifest[i]) return false;
  }
  return true;
}

// Checks one side (inputs or outputs) of a session against the manifest's tensors.
Expected<void> checkTensors(const Ort::Session& session, bool inputs,
                            const std::vector<TensorSpec>& specs, const std::string& where) {
  Ort::AllocatorWithDefaultOptions allocator;
  const char* side = inputs ? "input" : "output";
  const std::size_t count = inputs ? session.GetInputCount() : session.GetOutputCount();
  std::vector<std::string> names;
  for (std::size_t i = 0; i < count; ++i) {
    names.emplace_back(inputs ? session.GetInputNameAllocated(i, allocator).get()
                              : session.GetOutputNameAllocated(i, allocator).get());
  }
  if (inputs && count != specs.size()) {
    return makeError(ErrorCode::kInvalidData,
                     "{}: the model has {} input(s) ({}), the manifest lists {}", where, count,
                     fmt::join(names, ", "), specs.size());
  }
  for (const TensorSpec& spec : specs) {
    auto it = std::find(names.begin(), names.end(), spec.name);
    if (it == names.end()) {
      return makeError(ErrorCode::kInvalidData,
                       "{}: the manifest's {} '{}' is not in the model, whose {}s are: {}", where,
                       side, spec.name, side, fmt::join(names, ", "));
    }
    auto index = static_cast<std::size_t>(it - names.begin());
    Ort::TypeInfo type =
        inputs ? session.GetInputTypeInfo(index) : session.GetOutputTypeInfo(index);
    if (type.GetONNXType() != ONNX_TYPE_TENSOR) {
      return makeError(ErrorCode::kInvalidData, "{}: {} '{}' is not a tensor", where, side,
                       spec.name);
    }
    auto info = type.GetTensorTypeAndShapeInfo();
    if (info.GetElementType() != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT || spec.dtype != "float32") {
      return makeError(ErrorCode::kInvalidData,
                       "{}: {} '{}' has ONNX element type {}, the manifest says {}; the cpu-ort "
                       "backend runs float32 tensors only",
                       where, side, spec.name, static_cast<int>(info.GetElementType()), spec.dtype);
    }
    std::vector<std::int64_t> shape = info.GetShape();
    if (!shapeMatches(spec.shape, shape)) {
      return makeError(ErrorCode::kInvalidData, "{}: {} '{}' has shape {}, the manifest says {}",
                       where, side, spec.name, shapeText(shape), shapeText(spec.shape));
    }
  }
  return {};
}

// The model file's bytes as cpu-ort runs them: the spatial size left free when the picture
// may be smaller than the declared input (onnx_free_size.h), YOLOX's Focus stem as one
// convolution (onnx_focus_stem.h); nullopt when neither applies and the file runs as it is.
struct ModelBytes {
  std::string bytes;
  bool stemFused = false;
};
Expected<std::optional<ModelBytes>> readModel(const std::string& path, bool freeSize,
                                              bool fuseStem) {
  if (!freeSize && !fuseStem) return std::nullopt;
  std::ifstream file(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (!file && !file.eof()) {
    return makeError(ErrorCode::kNotFound, "{}: cannot read: {}", path, std::strerror(errno));
  }
  ModelBytes model;
  if (freeSize) {
    auto freed = freeSpatialSize(bytes, path);
    if (!freed) return tl::unexpected(freed.error());
    bytes = std::move(*freed);
  }
  if (auto fused = fuseStem ? fuseFocusStem(bytes) : std::nullopt) {
    bytes = std::move(*fused);
    model.stemFused = true;
  }
  if (!freeSize && !model.stemFused) return std::nullopt;
  model.bytes = std::move(bytes);
  return model;
}

struct Stage {
  const StageSpec* spec = nullptr;  // into specs_ of the backend, which owns a copy
  std::unique_ptr<Ort::Session> session;
  std::vector<const char*> inputNames;   // into *spec's strings
  std::vector<const char*> outputNames;  // into *spec's strings
  std::vector<Ort::Value>
      inputs;  // over the caller's input (stage 0) or the previous stage's buffers
  std::vector<Ort::Value> outputs;  // over buffers_ (the last stage's first: the caller's output)
  std::vector<std::vector<float>> buffers;  // one per output; unused for the caller's output
};

// What every stage of one backend is loaded with.
struct StageLoad {
  Ort::Env& env;
  const ModelManifest& manifest;
  int threads;
  bool spinning;
  bool freeSize;  // the graph runs at any size (readModel)
  bool fuseStem;
};

// One stage's session, checked against the manifest's tensors; `stemFused` is set when its
// Focus stem runs as one convolution.
Expected<Stage> loadStage(const StageLoad& load, const StageSpec& spec, bool& stemFused) {
  if (spec.runtime != "onnx") {
    return makeError(ErrorCode::kUnsupported,
                     "the cpu-ort backend cannot run stage '{}' (runtime {})", spec.name,
                     spec.runtime);
  }
  const std::string path = (load.manifest.directory() / spec.file).string();
  Stage stage;
  stage.spec = &spec;
  try {
    const Ort::SessionOptions sessionOptions = ortSessionOptions(load.threads, load.spinning);
    auto model = readModel(path, load.freeSize, load.fuseStem);
    if (!model) return tl::unexpected(model.error());
    if (*model) {
      stemFused = stemFused || (*model)->stemFused;
      stage.session = std::make_unique<Ort::Session>(load.env, (*model)->bytes.data(),
                                                     (*model)->bytes.size(), sessionOptions);
    } else {
      stage.session = std::make_unique<Ort::Session>(load.env, path.c_str(), sessionOptions);
    }
  } catch (const Ort::Exception& e) {
    return makeError(ErrorCode::kInvalidData, "{}: ONNX Runtime cannot load this model: {}", path,
                     e.what());
  }
  const std::string where =
      fmt::format("{} (stage '{}' of {})", path, spec.name, load.manifest.manifestPath.string());
  try {
    if (auto ok = checkTensors(*stage.session, true, spec.inputs, where); !ok) {
      return tl::unexpected(ok.error());
    }
    if (auto ok = checkTensors(*stage.session, false, spec.outputs, where); !ok) {
      return tl::unexpected(ok.error());
    }
  } catch (const Ort::Exception& e) {
    return makeError(ErrorCode::kInvalidData, "{}: ONNX Runtime: {}", where, e.what());
  }
  if (spec.inputs.empty() || spec.outputs.empty()) {
    return makeError(ErrorCode::kInvalidData, "{}: a stage needs an input and an output", where);
  }
  return stage;
}

// Every input of a later stage is an output of the stage before it (`manifest` names the file
// in the error).
Expected<void> checkStagesChain(const std::vector<Stage>& stages, const std::string& manifest) {
  for (std::size_t s = 1; s < stages.size(); ++s) {
    for (const TensorSpec& in : stages[s].spec->inputs) {
      const auto& prev = stages[s - 1].spec->outputs;
      bool found = std::any_of(prev.begin(), prev.end(),
                               [&](const TensorSpec& t) { return t.name == in.name; });
      if (!found) {
        return makeError(ErrorCode::kInvalidData,
                         "{}: stage '{}' needs tensor '{}', which stage '{}' does not produce",
                         manifest, stages[s].spec->name, in.name, stages[s - 1].spec->name);
      }
    }
  }
  return {};
}

class OrtBackend final : public InferenceBackend {
 public:
  OrtBackend(std::shared_ptr<Ort::Env> env, std::vector<StageSpec> specs, std::vector<Stage> stages,
             int threads, bool spinning, int sizeMultiple, bool stemFused)
      : env_(std::move(env)),
        specs_(std::move(specs)),
        stages_(std::move(stages)),
        threads_(threads),
        spinning_(spinning),
        sizeMultiple_(sizeMultiple),
        stemFused_(stemFused),
        memory_(Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault)) {
    // Names point into specs_, whose strings no longer move: taken here, not before.
    for (std::size_t s = 0; s < stages_.size(); ++s) {
      Stage& stage = stages_[s];
      stage.spec = &specs_[s];
      for (const TensorSpec& t : stage.spec->inputs) stage.inputNames.push_back(t.name.c_str());
      for (const TensorSpec& t : stage.spec->outputs) stage.outputNames.push_back(t.name.c_str());
      for (std::size_t i = 0; i < stage.spec->inputs.size(); ++i)
        stage.inputs.emplace_back(nullptr);
      for (std::size_t o = 0; o < stage.spec->outputs.size(); ++o)
        stage.outputs.emplace_back(nullptr);
      stage.buffers.resize(stage.spec->outputs.size());
    }
  }

  std::string_view name() const override { return "cpu-ort"; }

  std::string device() const override {
    return fmt::format("ONNX Runtime {} on CPU, {} thread{}{}{}",
                       OrtGetApiBase()->GetVersionString(), threads_, threads_ == 1 ? "" : "s",
                       spinning_ ? ", spinning" : "",
                       stemFused_ ? ", the Focus stem as one convolution" : "");
  }

  bool takesAnySize() const override { return sizeMultiple_ > 0; }

  // ONNX Runtime checks the flag between the graph's nodes: a stop waits for one node, not for
  // a whole inference (seconds of it on a slow or emulated CPU).
  void interrupt() override { runOptions_.SetTerminate(); }

  Expected<void> infer(const Tensor& input, Tensor& output) override {
    try {
      Stage& first = stages_.front();
      Stage& last = stages_.back();
      const TensorSpec& inSpec = first.spec->inputs.front();
      const TensorSpec& outSpec = last.spec->outputs.front();
      if (sizeMultiple_ > 0 && input.shape != inSpec.shape &&
          fitsWithin(input.shape, inSpec.shape)) {
        return inferAnySize(input, output);
      }
      if (input.data.size() != static_cast<std::size_t>(inSpec.elementCount())) {
        return makeError(ErrorCode::kInvalidArgument,
                         "cpu-ort: input has {} values, stage '{}' input '{}' takes {}",
                         input.data.size(), first.spec->name, inSpec.name, inSpec.elementCount());
      }
      if (output.shape != outSpec.shape) output.resize(outSpec.shape);
      output.name = outSpec.name;
      // Wrap the caller's storage once; again only if it moved (a new tensor, a resize).
      if (boundInput_ != input.data.data()) {
        first.inputs.front() =
            wrap(const_cast<float*>(input.data.data()), input.data.size(), inSpec.shape);
        boundInput_ = input.data.data();
      }
      if (boundOutput_ != output.data.data()) {
        last.outputs.front() = wrap(output.data.data(), output.data.size(), outSpec.shape);
        boundOutput_ = output.data.data();
      }
      if (!linked_) link();
      for (Stage& stage : stages_) {
        stage.session->Run(runOptions_, stage.inputNames.data(), stage.inputs.data(),
                           stage.inputs.size(), stage.outputNames.data(), stage.outputs.data(),
                           stage.outputs.size());
      }
      return {};
    } catch (const Ort::Exception& e) {
      return makeError(ErrorCode::kBackendFailure, "ONNX Runtime: {}", e.what());
    }
  }

 private:
  // An input smaller than the declared one (takesAnySize: one stage): the output's size follows
  // the input's, so ONNX Runtime allocates it and it is copied out (0.7 MB for YOLOX at 416x256,
  // a small part of the inference it follows).
  Expected<void> inferAnySize(const Tensor& input, Tensor& output) {
    Stage& stage = stages_.front();
    Ort::Value in = wrap(const_cast<float*>(input.data.data()), input.data.size(), input.shape);
    Ort::Value out{nullptr};
    stage.session->Run(runOptions_, stage.inputNames.data(), &in, 1, stage.outputNames.data(), &out,
                       1);
    std::vector<std::int64_t> shape = out.GetTensorTypeAndShapeInfo().GetShape();
    if (output.shape != shape) output.resize(std::move(shape));
    output.name = stage.spec->outputs.front().name;
    const float* data = out.GetTensorData<float>();
    std::copy(data, data + output.data.size(), output.data.begin());
    return {};
  }

  // [1, 3, H, W] within the declared [1, 3, H', W'], H and W multiples of sizeMultiple_.
  bool fitsWithin(const std::vector<std::int64_t>& shape,
                  const std::vector<std::int64_t>& declared) const {
    if (shape.size() != 4 || declared.size() != 4 || shape[0] != declared[0] ||
        shape[1] != declared[1]) {
      return false;
    }
    for (std::size_t i = 2; i < 4; ++i) {
      if (shape[i] < 1 || shape[i] > declared[i] || shape[i] % sizeMultiple_ != 0) return false;
    }
    return true;
  }

  Ort::Value wrap(float* data, std::size_t count, const std::vector<std::int64_t>& shape) {
    return Ort::Value::CreateTensor<float>(memory_, data, count, shape.data(), shape.size());
  }

  // Wraps every stage's own output buffers and the next stage's inputs over them, once.
  void link() {
    for (std::size_t s = 0; s < stages_.size(); ++s) {
      Stage& stage = stages_[s];
      const bool last = s + 1 == stages_.size();
      for (std::size_t o = 0; o < stage.spec->outputs.size(); ++o) {
        if (last && o == 0) continue;  // the caller's output
        const TensorSpec& t = stage.spec->outputs[o];
        stage.buffers[o].assign(static_cast<std::size_t>(t.elementCount()), 0.0F);
        stage.outputs[o] = wrap(stage.buffers[o].data(), stage.buffers[o].size(), t.shape);
      }
      if (s == 0) continue;
      Stage& prev = stages_[s - 1];
      for (std::size_t i = 0; i < stage.spec->inputs.size(); ++i) {
        for (std::size_t o = 0; o < prev.spec->outputs.size(); ++o) {
          if (prev.spec->outputs[o].name != stage.spec->inputs[i].name) continue;
          // The previous stage's output o lives in its buffer (it is never the caller's output,
          // which belongs to the last stage).
          stage.inputs[i] =
              wrap(prev.buffers[o].data(), prev.buffers[o].size(), prev.spec->outputs[o].shape);
        }
      }
    }
    linked_ = true;
  }

  std::shared_ptr<Ort::Env> env_;  // outlives the sessions (declared first, destroyed last)
  std::vector<StageSpec> specs_;
  std::vector<Stage> stages_;
  int threads_;
  bool spinning_;
  int sizeMultiple_;  // > 0: smaller inputs taken (takesAnySize), height and width multiples of it
  bool stemFused_;    // YOLOX's Focus stem runs as one convolution (onnx_focus_stem.h)
  Ort::MemoryInfo memory_;
  Ort::RunOptions runOptions_;
  const float* boundInput_ = nullptr;
  const float* boundOutput_ = nullptr;
  bool linked_ = false;
};

class OrtStage final : public CpuStage {
 public:
  OrtStage(std::shared_ptr<Ort::Env> env, std::unique_ptr<Ort::Session> session, StageSpec spec)
      : env_(std::move(env)), session_(std::move(session)), spec_(std::move(spec)) {}

  const StageSpec& spec() const override { return spec_; }

  Expected<void> run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    try {
      auto memory = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
      std::vector<const char*> inNames, outNames;
      std::vector<Ort::Value> ins, outs;
      for (std::size_t i = 0; i < spec_.inputs.size(); ++i) {
        inNames.push_back(spec_.inputs[i].name.c_str());
        auto& data = const_cast<std::vector<float>&>(inputs[i].data);
        ins.push_back(Ort::Value::CreateTensor<float>(
            memory, data.data(), data.size(), inputs[i].shape.data(), inputs[i].shape.size()));
      }
      for (std::size_t o = 0; o < spec_.outputs.size(); ++o) {
        const TensorSpec& t = spec_.outputs[o];
        outNames.push_back(t.name.c_str());
        if (outputs[o].shape != t.shape) outputs[o].resize(t.shape);
        outputs[o].name = t.name;
        outs.push_back(Ort::Value::CreateTensor<float>(memory, outputs[o].data.data(),
                                                       outputs[o].data.size(), t.shape.data(),
                                                       t.shape.size()));
      }
      session_->Run(Ort::RunOptions{nullptr}, inNames.data(), ins.data(), ins.size(),
                    outNames.data(), outs.data(), outs.size());
      return {};
    } catch (const Ort::Exception& e) {
      return makeError(ErrorCode::kBackendFailure, "ONNX Runtime, stage '{}': {}", spec_.name,
                       e.what());
    }
  }

 private:
  std::shared_ptr<Ort::Env> env_;  // outlives the session
  std::unique_ptr<Ort::Session> session_;
  StageSpec spec_;
};

}  // namespace

Expected<std::unique_ptr<CpuStage>> loadOrtStage(const std::filesystem::path& file,
                                                 const StageSpec& spec) {
  auto env = sharedEnv();
  if (!env) return tl::unexpected(env.error());
  std::unique_ptr<Ort::Session> session;
  const std::string where = fmt::format("{} (stage '{}')", file.string(), spec.name);
  try {
    const int threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    session =
        std::make_unique<Ort::Session>(**env, file.c_str(), ortSessionOptions(threads, false));
    if (auto ok = checkTensors(*session, true, spec.inputs, where); !ok)
      return tl::unexpected(ok.error());
    if (auto ok = checkTensors(*session, false, spec.outputs, where); !ok)
      return tl::unexpected(ok.error());
  } catch (const Ort::Exception& e) {
    return makeError(ErrorCode::kInvalidData, "{}: ONNX Runtime cannot load this model: {}", where,
                     e.what());
  }
  return std::make_unique<OrtStage>(std::move(*env), std::move(session), spec);
}

Expected<std::string> ortRuntimeVersion() {
  if (auto api = ortApi(); !api) return tl::unexpected(api.error());
  return std::string(OrtGetApiBase()->GetVersionString());
}

Expected<std::unique_ptr<InferenceBackend>> createOrtBackend(const ModelManifest& manifest,
                                                             const BackendOptions& options) {
  auto env = sharedEnv();
  if (!env) return tl::unexpected(env.error());
  const int threads = options.threads > 0
                          ? options.threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  std::vector<Stage> stages;
  bool stemFused = false;
  // A graph that runs at any size, given pictures smaller than its declared input: one stage
  // only (a later stage's buffers are sized by the manifest).
  const int sizeMultiple = manifest.input.anySize && manifest.stages.size() == 1
                               ? manifest.postprocess.largestStride()
                               : 0;
  const StageLoad load{.env = **env,
                       .manifest = manifest,
                       .threads = threads,
                       .spinning = options.spinning,
                       .freeSize = sizeMultiple > 0,
                       .fuseStem = options.fuseStem};
  for (const StageSpec& spec : manifest.stages) {
    auto stage = loadStage(load, spec, stemFused);
    if (!stage) return tl::unexpected(stage.error());
    stages.push_back(std::move(*stage));
  }
  if (stages.empty()) {
    return makeError(ErrorCode::kInvalidData, "{}: no stages", manifest.manifestPath.string());
  }
  if (auto ok = checkStagesChain(stages, manifest.manifestPath.string()); !ok) {
    return tl::unexpected(ok.error());
  }
  return std::make_unique<OrtBackend>(std::move(*env), manifest.stages, std::move(stages), threads,
                                      options.spinning, sizeMultiple, stemFused);
}

Ort::SessionOptions ortSessionOptions(int threads, bool spinning) {
  const char* spin = spinning ? "1" : "0";
  Ort::SessionOptions so;
  so.SetIntraOpNumThreads(threads);
  so.SetInterOpNumThreads(1);
  so.SetExecutionMode(ORT_SEQUENTIAL);
  so.SetGraphOptimizationLevel(GraphOptimizationLevel::ORT_ENABLE_ALL);
  so.AddConfigEntry(kOrtSessionOptionsConfigAllowIntraOpSpinning, spin);
  so.AddConfigEntry(kOrtSessionOptionsConfigAllowInterOpSpinning, spin);
  return so;
}

}  // namespace vigil
