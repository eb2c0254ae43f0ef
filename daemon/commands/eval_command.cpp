#include "daemon/commands/eval_command.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <ostream>

#include "daemon/base/log.h"
#include "daemon/commands/media_inputs.h"
#include "daemon/commands/progress_line.h"

namespace vigil {

namespace {

// The COCO detection protocol YOLOX's published figures use.
constexpr float kEvalMinScore = 0.01F;
constexpr float kEvalNmsIou = 0.65F;
constexpr int kEvalMaxDetections = 100;
constexpr int kCocoPersonCategory = 1;

// The detector's options under the COCO protocol, where the command line does not say.
DetectorOptions evalDetectorOptions(const EvalCommandOptions& options) {
  DetectorOptions detectorOptions = toDetectorOptions(options.detector);
  if (!detectorOptions.minScore) detectorOptions.minScore = kEvalMinScore;
  if (!detectorOptions.nmsIou) detectorOptions.nmsIou = kEvalNmsIou;
  if (detectorOptions.classes.empty()) detectorOptions.classes = {"person"};
  detectorOptions.maxDetections = kEvalMaxDetections;
  return detectorOptions;
}

// The image at full size, or with --scaled-decode at the smallest size covering `input`.
Expected<ScaledImage> readEvalImage(const std::filesystem::path& path, bool scaledDecode,
                                    const InputSpec& input) {
  if (scaledDecode) return readJpegScaled(path, cv::Size(input.width, input.height));
  return readImage(path).map([](cv::Mat bgr) {
    const cv::Size full = bgr.size();
    return ScaledImage{std::move(bgr), full};
  });
}

// The metrics, the run's figures, and with --json the metrics as one JSON line.
void reportEval(const CocoMetrics& m, int failures, double meanInferenceMs,
                const Detector& detector, bool json, std::ostream& out) {
  out << fmt::format("person AP@[.50:.95] {:.3f}  AP50 {:.3f}  AP75 {:.3f}  AR@100 {:.3f}\n", m.ap,
                     m.ap50, m.ap75, m.ar);
  out << fmt::format(
      "{} images ({} failed), {} positives, backend {}, input {}, mean inference {:.1f} ms\n",
      m.images, failures, m.positives, detector.backend().device(), detector.inputDescription(),
      meanInferenceMs);
  if (json) {
    nlohmann::json line = {{"AP", m.ap}, {"AP50", m.ap50},     {"AP75", m.ap75},
                           {"AR", m.ar}, {"images", m.images}, {"positives", m.positives}};
    out << line.dump() << '\n';
  }
}

}  // namespace

void addEvalCommand(CLI::App& app, EvalCommandOptions& options) {
  CLI::App* cmd =
      app.add_subcommand("eval", "Person AP of the detector on a COCO-style annotated image set");
  addDetectorOptions(*cmd, options.detector);
  // The COCO protocol's thresholds, not the model's: say so where --help lists them.
  cmd->get_option("--conf")->description(
      fmt::format("Minimum score (default: {}, the COCO protocol's)", kEvalMinScore));
  cmd->get_option("--nms")->description(
      fmt::format("NMS IoU threshold (default: {}, the COCO protocol's)", kEvalNmsIou));
  cmd->add_option("--images", options.images, "Directory holding the annotated images")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--annotations", options.annotations, "COCO-style annotation file (JSON)")
      ->required();
  cmd->add_flag("--json", options.json, "End with the metrics as one JSON line");
  cmd->add_flag("--scaled-decode", options.scaledDecode,
                "Decode each JPEG as the daemon does a camera's: at the smallest size (1/2, 1/4, "
                "1/8) that covers the detector's input");
}

int runEvalCommand(const EvalCommandOptions& options, std::ostream& out) {
  auto log = logger("eval");
  auto dataset = loadCocoDataset(options.annotations, kCocoPersonCategory);
  if (!dataset) {
    log->error("{}", dataset.error().message);
    return 2;
  }
  auto detector = createDetectorLogged(evalDetectorOptions(options));
  if (!detector) {
    log->error("{}", detector.error().message);
    return 2;
  }
  const int person = (*detector)->manifest().postprocess.classIndex("person");

  std::map<std::int64_t, std::vector<ScoredBox>> detections;
  DetectionResult result;
  int failures = 0;
  double inferenceMs = 0;
  ProgressLine progress("eval", "images", dataset->images.size());
  for (const CocoImage& image : dataset->images) {
    progress.update(static_cast<std::size_t>(&image - dataset->images.data()));
    std::filesystem::path path = std::filesystem::path(options.images) / image.fileName;
    auto read = readEvalImage(path, options.scaledDecode, (*detector)->manifest().input);
    if (!read) {
      log->error("{}", read.error().message);
      ++failures;
      continue;
    }
    if (auto ok = (*detector)->detect(read->bgr, read->full, result); !ok) {
      log->error("{}: {}", path.string(), ok.error().message);
      ++failures;
      continue;
    }
    inferenceMs += result.timings.inferenceMs;
    auto& boxes = detections[image.id];
    for (const Detection& d : result.detections) {
      if (d.classId == person) boxes.push_back({d.box, d.score});
    }
  }

  const double meanInferenceMs =
      dataset->images.empty() ? 0.0 : inferenceMs / static_cast<double>(dataset->images.size());
  reportEval(evaluateCoco(*dataset, detections, kEvalMaxDetections), failures, meanInferenceMs,
             **detector, options.json, out);
  return failures == 0 ? 0 : 2;
}

}  // namespace vigil
