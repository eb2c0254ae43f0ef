#include "daemon/commands/bench_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <ostream>

#include "daemon/commands/media_inputs.h"
#include "daemon/log.h"

namespace vigil {

void addBenchCommand(CLI::App& app, BenchCommandOptions& options) {
  CLI::App* cmd = app.add_subcommand("bench", "Time each detector stage per frame on real images");
  addDetectorOptions(*cmd, options.detector);
  cmd->add_option("--warmup", options.warmup, "Runs before measuring")
      ->check(CLI::Range(0, 10000))
      ->capture_default_str();
  cmd->add_option("--iterations", options.iterations, "Measured runs")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_flag("--json", options.json, "Print the figures as one JSON object");
  cmd->add_option("paths", options.paths, "Images or directories of images, cycled through")
      ->required();
}

Summary summarize(std::vector<double> values) {
  Summary s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  s.min = values.front();
  s.max = values.back();
  s.median = n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  auto rank = static_cast<std::size_t>(std::ceil(0.95 * static_cast<double>(n)));
  s.p95 = values[std::clamp<std::size_t>(rank, 1, n) - 1];
  return s;
}

int runBenchCommand(const BenchCommandOptions& options, std::ostream& out) {
  auto log = logger("bench");
  std::vector<cv::Mat> images;
  std::vector<std::string> names;
  for (const std::string& path : options.paths) {
    auto items = expandMediaPath(path);
    if (!items) {
      log->error("{}", items.error().message);
      return 2;
    }
    for (const MediaItem& item : *items) {
      if (item.kind != MediaKind::kImage) {
        log->error("{}: bench takes images, not videos", item.path.string());
        return 2;
      }
      auto image = readImage(item.path);
      if (!image) {
        log->error("{}", image.error().message);
        return 2;
      }
      images.push_back(*image);
      names.push_back(item.path.string());
    }
  }
  auto detector = createDetectorLogged(toDetectorOptions(options.detector));
  if (!detector) {
    log->error("{}", detector.error().message);
    return 2;
  }

  DetectionResult result;
  std::vector<double> pre;
  std::vector<double> infer;
  std::vector<double> post;
  std::vector<double> total;
  const int runs = options.warmup + options.iterations;
  for (int i = 0; i < runs; ++i) {
    const cv::Mat& image = images[static_cast<std::size_t>(i) % images.size()];
    if (auto ok = (*detector)->detect(image, result); !ok) {
      log->error("{}: {}", names[static_cast<std::size_t>(i) % names.size()], ok.error().message);
      return 2;
    }
    if (i < options.warmup) continue;
    const StageTimings& t = result.timings;
    pre.push_back(t.preprocessMs);
    infer.push_back(t.inferenceMs);
    post.push_back(t.postprocessMs);
    total.push_back(t.preprocessMs + t.inferenceMs + t.postprocessMs);
  }
  Summary sPre = summarize(pre);
  Summary sInfer = summarize(infer);
  Summary sPost = summarize(post);
  Summary sTotal = summarize(total);
  double share = sInfer.median > 0 ? 100.0 * (sPre.median + sPost.median) / sInfer.median : 0;

  const Detector& d = **detector;
  if (options.json) {
    auto toJson = [](const Summary& s) {
      return nlohmann::json{{"median", s.median}, {"p95", s.p95}, {"min", s.min}, {"max", s.max}};
    };
    nlohmann::json j = {
        {"backend", d.backend().name()},
        {"device", d.backend().device()},
        {"model", d.manifest().name},
        {"images", names},
        {"warmup", options.warmup},
        {"iterations", options.iterations},
        {"ms",
         {{"preprocess", toJson(sPre)},
          {"inference", toJson(sInfer)},
          {"postprocess", toJson(sPost)},
          {"total", toJson(sTotal)}}},
        {"pre_post_percent_of_inference", share},
    };
    out << j.dump() << '\n';
    return 0;
  }
  out << fmt::format("model {} on {} ({}), {} image(s), warm-up {}, {} measured runs\n",
                     d.manifest().name, d.backend().name(), d.backend().device(), images.size(),
                     options.warmup, options.iterations);
  out << fmt::format("{:<12} {:>9} {:>9} {:>9} {:>9}\n", "stage (ms)", "median", "p95", "min",
                     "max");
  for (auto [label, s] : {std::pair{"preprocess", sPre}, std::pair{"inference", sInfer},
                          std::pair{"postprocess", sPost}, std::pair{"total", sTotal}}) {
    out << fmt::format("{:<12} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f}\n", label, s.median, s.p95,
                       s.min, s.max);
  }
  out << fmt::format("pre+postprocess = {:.2f}% of inference (medians)\n", share);
  return 0;
}

}  // namespace vigil
