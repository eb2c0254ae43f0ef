#include "daemon/commands/bench_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "daemon/commands/media_inputs.h"
#include "daemon/log.h"
#include "daemon/observe/metrics.h"

namespace vigil {

void addBenchCommand(CLI::App& app, BenchCommandOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "Time each detector stage per frame on real images; --backend a,b runs several backends "
      "in alternation in one process");
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

namespace {

// One backend under test: its detector and what was measured on it.
struct BenchedBackend {
  std::unique_ptr<Detector> detector;
  std::vector<double> pre;
  std::vector<double> infer;
  std::vector<double> post;
  std::vector<double> total;
  std::vector<double> cpu;  // process CPU time (all threads) per frame
};

nlohmann::json toJson(const Summary& s) {
  return nlohmann::json{{"median", s.median}, {"p95", s.p95}, {"min", s.min}, {"max", s.max}};
}

double mean(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  return values.empty() ? 0 : sum / static_cast<double>(values.size());
}

}  // namespace

std::vector<std::string> splitBackends(const std::string& list) {
  std::vector<std::string> names;
  std::stringstream in(list);
  for (std::string name; std::getline(in, name, ',');) {
    if (!name.empty()) names.push_back(name);
  }
  return names;
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
  const std::vector<std::string> backendNames = splitBackends(options.detector.backend);
  if (backendNames.empty()) {
    log->error("--backend: name at least one backend");
    return 2;
  }
  std::vector<BenchedBackend> benched;
  for (const std::string& backend : backendNames) {
    DetectorOptions detectorOptions = toDetectorOptions(options.detector);
    detectorOptions.backend = backend;
    auto detector = createDetectorLogged(detectorOptions);
    if (!detector) {
      log->error("{}", detector.error().message);
      return 2;
    }
    benched.push_back(BenchedBackend{std::move(*detector), {}, {}, {}, {}, {}});
  }

  // Several backends run in alternation, frame by frame, the first one of each round rotating:
  // load from elsewhere on the machine then hits them all alike, and their ratio stays true.
  DetectionResult result;
  const std::size_t n = benched.size();
  const int runs = options.warmup + options.iterations;
  for (int i = 0; i < runs; ++i) {
    const std::size_t frame = static_cast<std::size_t>(i) % images.size();
    for (std::size_t k = 0; k < n; ++k) {
      BenchedBackend& b = benched[(static_cast<std::size_t>(i) + k) % n];
      const double cpu0 = processCpuSeconds();
      if (auto ok = b.detector->detect(images[frame], result); !ok) {
        log->error("{} on {}: {}", names[frame], b.detector->backend().name(), ok.error().message);
        return 2;
      }
      const double cpu = (processCpuSeconds() - cpu0) * 1e3;  // ms
      if (i < options.warmup) continue;
      const StageTimings& t = result.timings;
      b.pre.push_back(t.preprocessMs);
      b.infer.push_back(t.inferenceMs);
      b.post.push_back(t.postprocessMs);
      b.total.push_back(t.preprocessMs + t.inferenceMs + t.postprocessMs);
      b.cpu.push_back(cpu);
    }
  }

  // Per round, the first backend's inference time over each other's: the noise-free ratio.
  auto ratioToFirst = [&](const BenchedBackend& b) {
    std::vector<double> ratios;
    for (std::size_t i = 0; i < b.infer.size(); ++i) {
      if (b.infer[i] > 0) ratios.push_back(benched.front().infer[i] / b.infer[i]);
    }
    return summarize(ratios).median;
  };

  if (options.json) {
    nlohmann::json all = nlohmann::json::array();
    for (const BenchedBackend& b : benched) {
      const Detector& d = *b.detector;
      Summary sPre = summarize(b.pre);
      Summary sInfer = summarize(b.infer);
      Summary sPost = summarize(b.post);
      double share = sInfer.median > 0 ? 100.0 * (sPre.median + sPost.median) / sInfer.median : 0;
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
            {"total", toJson(summarize(b.total))}}},
          {"pre_post_percent_of_inference", share},
          {"cpu_ms_per_frame", {{"mean", mean(b.cpu)}, {"median", summarize(b.cpu).median}}},
      };
      if (n > 1) j["inference_speedup_vs_first_median"] = ratioToFirst(b);
      all.push_back(std::move(j));
    }
    if (n == 1) {
      out << all.front().dump() << '\n';
    } else {
      out << nlohmann::json{{"alternating", true}, {"backends", all}}.dump() << '\n';
    }
    return 0;
  }
  for (const BenchedBackend& b : benched) {
    const Detector& d = *b.detector;
    Summary sPre = summarize(b.pre);
    Summary sInfer = summarize(b.infer);
    Summary sPost = summarize(b.post);
    Summary sTotal = summarize(b.total);
    double share = sInfer.median > 0 ? 100.0 * (sPre.median + sPost.median) / sInfer.median : 0;
    out << fmt::format("model {} on {} ({}), {} image(s), warm-up {}, {} measured runs{}\n",
                       d.manifest().name, d.backend().name(), d.backend().device(), images.size(),
                       options.warmup, options.iterations,
                       n > 1 ? ", in alternation with the other backends" : "");
    out << fmt::format("{:<12} {:>9} {:>9} {:>9} {:>9}\n", "stage (ms)", "median", "p95", "min",
                       "max");
    for (auto [label, s] : {std::pair{"preprocess", sPre}, std::pair{"inference", sInfer},
                            std::pair{"postprocess", sPost}, std::pair{"total", sTotal}}) {
      out << fmt::format("{:<12} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f}\n", label, s.median, s.p95,
                         s.min, s.max);
    }
    out << fmt::format("pre+postprocess = {:.2f}% of inference (medians)\n", share);
    out << fmt::format("process CPU per frame: {:.3f} ms mean, {:.3f} ms median\n", mean(b.cpu),
                       summarize(b.cpu).median);
    if (n > 1 && &b != &benched.front()) {
      out << fmt::format("inference {:.2f}x faster than {} (median of per-round ratios)\n",
                         ratioToFirst(b), benched.front().detector->backend().name());
    }
    out << '\n';
  }
  return 0;
}

}  // namespace vigil
