#include "daemon/commands/detector_cli.h"

#include <cstdlib>
#include <sstream>

#include "daemon/base/log.h"
#include "daemon/base/model_location.h"

namespace vigil {

void addDetectorOptions(CLI::App& command, DetectorCliOptions& options) {
  command.add_option(
      "--model", options.model,
      "Model directory or its model.yaml (default: $VIGIL_MODEL or " + defaultModelPath() + ")");
  command.add_option("--backend", options.backend, "Inference backend: " + backendNames())
      ->capture_default_str();
  command
      .add_option("--threads", options.threads,
                  "Inference threads on the CPU (0: every hardware thread)")
      ->check(CLI::Range(0, 256))
      ->capture_default_str();
  command
      .add_option("--conf", options.minScore,
                  "Minimum score (default: the model's, 0.3 for yolox-nano: below the "
                  "daemon's detector.min_score, 0.5, so that the near misses show)")
      ->check(CLI::Range(0.0, 1.0));
  command.add_option("--nms", options.nmsIou, "NMS IoU threshold (default: the model's)")
      ->check(CLI::Range(0.0, 1.0));
  command.add_option("--classes", options.classes,
                     "Comma-separated class names to report (default: the model's, person)");
  command.add_option("--onnxruntime", options.onnxRuntime,
                     "ONNX Runtime with the Vitis AI EP for vitisai bundles: libonnxruntime.so "
                     "or its directory (default: $VIGIL_ORT_ROOT)");
  command.add_flag("--denoise", options.denoise,
                   "A 3x3 median on the letterboxed pictures before inference, as the daemon's "
                   "camera's denoise: true");
  command.add_flag("--square-input", options.squareInput,
                   "Every picture padded to the model's full input size, also where the model "
                   "and backend take a smaller one (cpu-ort pads only to a multiple of 32): to "
                   "compare the two");
  command.add_flag("--file-graph", options.fileGraph,
                   "Run the model file's graph node for node (cpu-ort otherwise runs YOLOX's "
                   "Focus stem, its Slices and Concat, as one convolution): to compare the two");
  command.add_flag("--allow-unverified-model", options.allowUnverifiedModel,
                   "Run weights whose sha256 the manifest does not list");
}

std::string defaultModelPath() {
  if (const char* env = std::getenv("VIGIL_MODEL"); env != nullptr && *env != '\0') return env;
  return builtInModelDir().string();
}

DetectorOptions toDetectorOptions(const DetectorCliOptions& options) {
  DetectorOptions d;
  d.model = options.model.empty() ? defaultModelPath() : options.model;
  d.backend = options.backend;
  d.threads = options.threads;
  d.minScore = options.minScore;
  d.nmsIou = options.nmsIou;
  d.allowUnverifiedModel = options.allowUnverifiedModel;
  d.denoise = options.denoise;
  d.fitInput = !options.squareInput;
  d.fuseStem = !options.fileGraph;
  d.vitisai.onnxRuntime = options.onnxRuntime;
  std::stringstream list(options.classes);
  for (std::string name; std::getline(list, name, ',');) {
    if (!name.empty()) d.classes.push_back(name);
  }
  return d;
}

Expected<std::unique_ptr<Detector>> createDetectorLogged(const DetectorOptions& options) {
  auto log = logger("detector");
  auto detector = Detector::create(options);
  if (!detector) return detector;
  const Detector& d = **detector;
  for (const ModelVerification& v : d.verification()) {
    if (v.listed) {
      log->debug("model file {} verified (sha256 {}, {})", v.file, v.sha256, v.origin);
    } else {
      log->warn(
          "model file {} is UNVERIFIED (sha256 {} is not in {}); running it because "
          "--allow-unverified-model was given",
          v.file, v.sha256, d.manifest().manifestPath.string());
    }
  }
  if (!d.autoFallback().empty()) log->warn("backend auto fell back: {}", d.autoFallback());
  if (!d.fitRefused().empty()) {
    log->warn("the model's input.any_size is not taken, every input is {}: {}",
              d.inputDescription(), d.fitRefused());
  }
  log->info("model {} on backend '{}': {}; input {}; min score {}, NMS IoU {}, denoise {}",
            d.manifest().name, d.backend().name(), d.backend().device(), d.inputDescription(),
            d.minScore(), d.nmsIou(), options.denoise ? "on" : "off");
  return detector;
}

}  // namespace vigil
