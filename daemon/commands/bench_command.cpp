#include "daemon/commands/bench_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <thread>

#include "daemon/base/log.h"
#include "daemon/base/metrics.h"
#include "daemon/commands/media_inputs.h"
#include "detector/npu/npu_stats.h"

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
  cmd->add_option("--batch", options.batches,
                  "Batch sizes, e.g. 1,8,16: a batch is N frames submitted back to back, "
                  "reported per frame")
      ->delimiter(',')
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--pace-ms", options.paceMs,
                  "Rest after each batch (not timed), e.g. 200 for a camera at 5 detections a "
                  "second: the daemon's cadence, cold caches included")
      ->check(CLI::Range(0, 10000))
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

// What was measured on one backend at one batch size; each entry is one measured batch, per
// frame (the batch's sum divided by its size).
struct Measured {
  int batch = 1;
  std::vector<double> pre;
  std::vector<double> infer;
  std::vector<double> post;
  std::vector<double> total;
  std::vector<double> cpu;  // process CPU time (all threads) per frame
  double cpuSeconds = 0;    // over the measured batches
  double wallSeconds = 0;
};

// One backend under test: its detector and what was measured on it, per batch size.
struct BenchedBackend {
  std::unique_ptr<Detector> detector;
  std::vector<Measured> batches;  // in the order of --batch
  bool npu = false;               // runs an NPU stage (npu, or auto on an NPU bundle)
};

nlohmann::json toJson(const Summary& s) {
  return nlohmann::json{{"median", s.median}, {"p95", s.p95}, {"min", s.min}, {"max", s.max}};
}

double mean(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  return values.empty() ? 0 : sum / static_cast<double>(values.size());
}

// Process CPU seconds over wall seconds while the backend ran: 1.0 is one core kept busy.
double cpuUtilisation(const Measured& m) {
  return m.wallSeconds > 0 ? m.cpuSeconds / m.wallSeconds : 0;
}

// XRT's noop shim computes nothing and completes every run at once: NPU times under it are
// the host's share of the work, not the NPU's speed.
bool underNoopShim() {
  const char* mode = std::getenv("XCL_EMULATION_MODE");
  return mode != nullptr && std::string_view(mode) == "noop";
}

// The images of the run, cycled through, and their paths for messages and the report.
struct BenchImages {
  std::vector<cv::Mat> images;
  std::vector<std::string> names;
};

Expected<BenchImages> readBenchImages(const std::vector<std::string>& paths) {
  BenchImages inputs;
  for (const std::string& path : paths) {
    auto items = expandMediaPath(path);
    if (!items) return tl::unexpected(items.error());
    for (const MediaItem& item : *items) {
      if (item.kind != MediaKind::kImage) {
        return makeError(ErrorCode::kInvalidArgument, "{}: bench takes images, not videos",
                         item.path.string());
      }
      auto image = readImage(item.path);
      if (!image) return tl::unexpected(image.error());
      inputs.images.push_back(*image);
      inputs.names.push_back(item.path.string());
    }
  }
  return inputs;
}

// One detector per name of --backend, each with an empty Measured per batch size.
Expected<std::vector<BenchedBackend>> createBenchedBackends(const BenchCommandOptions& options) {
  const std::vector<std::string> backendNames = splitBackends(options.detector.backend);
  if (backendNames.empty()) {
    return makeError(ErrorCode::kInvalidArgument, "--backend: name at least one backend");
  }
  std::vector<BenchedBackend> benched;
  for (const std::string& backend : backendNames) {
    DetectorOptions detectorOptions = toDetectorOptions(options.detector);
    detectorOptions.backend = backend;
    detectorOptions.compareWithReference = true;  // only NPU backends take notice
    auto detector = createDetectorLogged(detectorOptions);
    if (!detector) return tl::unexpected(detector.error());
    BenchedBackend b;
    b.npu = (*detector)->backend().name() == "npu" ||
            (backend == "auto" && (*detector)->manifest().npuStage() != nullptr);
    for (int size : options.batches) b.batches.push_back(Measured{size, {}, {}, {}, {}, {}, 0, 0});
    b.detector = std::move(*detector);
    benched.push_back(std::move(b));
  }
  return benched;
}

std::uint64_t npuFallbacks(const NpuStats& npu) {
  std::uint64_t fallbacks = 0;
  for (std::size_t r = 0; r < static_cast<std::size_t>(FallbackReason::kCount); ++r) {
    fallbacks += npu.fallbackCount(static_cast<FallbackReason>(r));
  }
  return fallbacks;
}

// The NPU counters when the measured run starts.
struct NpuCheckStart {
  std::uint64_t compared = 0;
  std::uint64_t invalid = 0;
  std::uint64_t fallbacks = 0;
};

// The canaries at creation ran compared too; the report counts the frames of the run
// (warm-up included: every output is checked).
NpuCheckStart startNpuCheck() {
  NpuStats& npu = npuStats();
  npu.referenceMaxAbsDiff.store(0, std::memory_order_relaxed);
  return {npu.referenceComparisons.load(), npu.invalidOutputs.load(), npuFallbacks(npu)};
}

// Every NPU output of the run: finite (a NaN fails the frame, or makes auto fall
// back) and compared with the CPU reference of the same stage.
nlohmann::json npuCheckSince(const NpuCheckStart& start, bool noop) {
  const NpuStats& npu = npuStats();
  const std::uint64_t fallbacks = npuFallbacks(npu);
  return {{"outputs_compared_with_cpu", npu.referenceComparisons.load() - start.compared},
          {"max_abs_diff_to_cpu", npu.referenceMaxAbsDiff.load()},
          {"invalid_outputs", npu.invalidOutputs.load() - start.invalid},
          {"fallbacks_to_cpu", fallbacks - start.fallbacks},
          {"noop_shim", noop}};
}

// What one batch cost: its stage times summed over its frames, process CPU and wall seconds.
struct BatchCost {
  StageTimings sum;
  double cpu = 0;
  double wall = 0;
};

// `size` frames from image `first` on, submitted back to back to one backend.
Expected<BatchCost> runBatch(BenchedBackend& b, const BenchImages& inputs, std::size_t first,
                             int size, DetectionResult& result) {
  BatchCost cost;
  const double cpu0 = processCpuSeconds();
  const auto wall0 = std::chrono::steady_clock::now();
  for (int f = 0; f < size; ++f) {
    const std::size_t frame = (first + static_cast<std::size_t>(f)) % inputs.images.size();
    if (auto ok = b.detector->detect(inputs.images[frame], result); !ok) {
      return makeError(ok.error().code, "{} on {}: {}", inputs.names[frame],
                       b.detector->backend().name(), ok.error().message);
    }
    cost.sum.preprocessMs += result.timings.preprocessMs;
    cost.sum.inferenceMs += result.timings.inferenceMs;
    cost.sum.postprocessMs += result.timings.postprocessMs;
  }
  cost.cpu = processCpuSeconds() - cpu0;
  cost.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return cost;
}

// A measured batch's figures, per frame.
void recordBatch(Measured& m, const BatchCost& cost, int size) {
  const double per = 1.0 / size;
  const StageTimings& sum = cost.sum;
  m.pre.push_back(sum.preprocessMs * per);
  m.infer.push_back(sum.inferenceMs * per);
  m.post.push_back(sum.postprocessMs * per);
  m.total.push_back((sum.preprocessMs + sum.inferenceMs + sum.postprocessMs) * per);
  m.cpu.push_back(cost.cpu * 1e3 * per);
  m.cpuSeconds += cost.cpu;
  m.wallSeconds += cost.wall;
}

// Several backends run in alternation, batch by batch, the first one of each round rotating:
// load from elsewhere on the machine then hits them all alike, and their ratio stays true.
// A batch is `size` frames submitted back to back; its figures are per frame.
Expected<void> measureBench(std::vector<BenchedBackend>& benched, const BenchImages& inputs,
                            const BenchCommandOptions& options) {
  DetectionResult result;
  const std::size_t n = benched.size();
  const int runs = options.warmup + options.iterations;
  std::size_t next = 0;  // the next image, cycled through
  for (std::size_t s = 0; s < options.batches.size(); ++s) {
    const int size = options.batches[s];
    for (int i = 0; i < runs; ++i) {
      const std::size_t first = next;
      next = (next + static_cast<std::size_t>(size)) % inputs.images.size();
      for (std::size_t k = 0; k < n; ++k) {
        BenchedBackend& b = benched[(static_cast<std::size_t>(i) + k) % n];
        auto cost = runBatch(b, inputs, first, size, result);
        if (!cost) return tl::unexpected(cost.error());
        if (options.paceMs > 0)
          std::this_thread::sleep_for(std::chrono::milliseconds(options.paceMs));
        if (i < options.warmup) continue;
        recordBatch(b.batches[s], *cost, size);
      }
    }
  }
  return {};
}

// Per round, the first backend's inference time over each other's: the noise-free ratio.
double ratioToFirst(const std::vector<BenchedBackend>& benched, const BenchedBackend& b,
                    std::size_t s) {
  std::vector<double> ratios;
  const Measured& mine = b.batches[s];
  const Measured& theirs = benched.front().batches[s];
  for (std::size_t i = 0; i < mine.infer.size(); ++i) {
    if (mine.infer[i] > 0) ratios.push_back(theirs.infer[i] / mine.infer[i]);
  }
  return summarize(ratios).median;
}

nlohmann::json measuredJson(const std::vector<BenchedBackend>& benched, const BenchedBackend& b,
                            std::size_t s) {
  const Measured& m = b.batches[s];
  Summary sPre = summarize(m.pre);
  Summary sInfer = summarize(m.infer);
  Summary sPost = summarize(m.post);
  double share = sInfer.median > 0 ? 100.0 * (sPre.median + sPost.median) / sInfer.median : 0;
  nlohmann::json j = {
      {"batch", m.batch},
      {"ms",
       {{"preprocess", toJson(sPre)},
        {"inference", toJson(sInfer)},
        {"postprocess", toJson(sPost)},
        {"total", toJson(summarize(m.total))}}},
      {"pre_post_percent_of_inference", share},
      {"cpu_ms_per_frame", {{"mean", mean(m.cpu)}, {"median", summarize(m.cpu).median}}},
      {"process_cpu_utilisation", cpuUtilisation(m)},
  };
  if (benched.size() > 1) j["inference_speedup_vs_first_median"] = ratioToFirst(benched, b, s);
  return j;
}

void printBenchJson(const std::vector<BenchedBackend>& benched, const BenchImages& inputs,
                    const BenchCommandOptions& options, const nlohmann::json& npuCheck,
                    std::ostream& out) {
  nlohmann::json all = nlohmann::json::array();
  for (const BenchedBackend& b : benched) {
    const Detector& d = *b.detector;
    // The first batch size's figures at the top level (as before --batch), every one in
    // "batches".
    nlohmann::json j = measuredJson(benched, b, 0);
    j.erase("batch");
    j["backend"] = d.backend().name();
    j["device"] = d.backend().device();
    j["model"] = d.manifest().name;
    j["images"] = inputs.names;
    j["warmup"] = options.warmup;
    j["pace_ms"] = options.paceMs;
    j["iterations"] = options.iterations;
    j["batches"] = nlohmann::json::array();
    for (std::size_t s = 0; s < b.batches.size(); ++s) {
      j["batches"].push_back(measuredJson(benched, b, s));
    }
    if (b.npu) j["npu_check"] = npuCheck;
    all.push_back(std::move(j));
  }
  if (benched.size() == 1) {
    out << all.front().dump() << '\n';
  } else {
    out << nlohmann::json{{"alternating", true}, {"backends", all}}.dump() << '\n';
  }
}

void printBatchText(const std::vector<BenchedBackend>& benched, const BenchedBackend& b,
                    std::size_t s, std::ostream& out) {
  const Measured& m = b.batches[s];
  Summary sPre = summarize(m.pre);
  Summary sInfer = summarize(m.infer);
  Summary sPost = summarize(m.post);
  Summary sTotal = summarize(m.total);
  double share = sInfer.median > 0 ? 100.0 * (sPre.median + sPost.median) / sInfer.median : 0;
  out << fmt::format("batch {} (frames back to back; ms per frame)\n", m.batch);
  out << fmt::format("{:<12} {:>9} {:>9} {:>9} {:>9}\n", "stage (ms)", "median", "p95", "min",
                     "max");
  for (auto [label, sm] : {std::pair{"preprocess", sPre}, std::pair{"inference", sInfer},
                           std::pair{"postprocess", sPost}, std::pair{"total", sTotal}}) {
    out << fmt::format("{:<12} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f}\n", label, sm.median, sm.p95,
                       sm.min, sm.max);
  }
  out << fmt::format("pre+postprocess = {:.2f}% of inference (medians)\n", share);
  out << fmt::format(
      "process CPU per frame: {:.3f} ms mean, {:.3f} ms median; CPU utilisation {:.2f} "
      "(process CPU s / wall s)\n",
      mean(m.cpu), summarize(m.cpu).median, cpuUtilisation(m));
  if (benched.size() > 1 && &b != &benched.front()) {
    out << fmt::format("inference {:.2f}x faster than {} (median of per-round ratios)\n",
                       ratioToFirst(benched, b, s), benched.front().detector->backend().name());
  }
}

void printNpuCheckText(const nlohmann::json& npuCheck, bool noop, std::ostream& out) {
  out << fmt::format(
      "NPU outputs: {} compared with the CPU reference of the same stage, max abs diff {:g}; "
      "{} invalid (NaN/Inf), {} fallbacks to the CPU{}\n",
      npuCheck["outputs_compared_with_cpu"].get<std::uint64_t>(),
      npuCheck["max_abs_diff_to_cpu"].get<double>(),
      npuCheck["invalid_outputs"].get<std::uint64_t>(),
      npuCheck["fallbacks_to_cpu"].get<std::uint64_t>(),
      noop ? " (noop shim: replayed or zero outputs)" : "");
}

void printBenchText(const std::vector<BenchedBackend>& benched, const BenchImages& inputs,
                    const BenchCommandOptions& options, const nlohmann::json& npuCheck, bool noop,
                    std::ostream& out) {
  if (noop) {
    out << "NOTE: XRT noop shim (XCL_EMULATION_MODE=noop): nothing runs on an NPU; the npu "
           "times below are not NPU speed\n\n";
  }
  for (const BenchedBackend& b : benched) {
    const Detector& d = *b.detector;
    out << fmt::format("model {} on {} ({}), {} image(s), warm-up {}, {} measured batches{}\n",
                       d.manifest().name, d.backend().name(), d.backend().device(),
                       inputs.images.size(), options.warmup, options.iterations,
                       benched.size() > 1 ? ", in alternation with the other backends" : "");
    for (std::size_t s = 0; s < b.batches.size(); ++s) printBatchText(benched, b, s, out);
    if (b.npu) printNpuCheckText(npuCheck, noop, out);
    out << '\n';
  }
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
  auto inputs = readBenchImages(options.paths);
  if (!inputs) {
    log->error("{}", inputs.error().message);
    return 2;
  }
  auto benched = createBenchedBackends(options);
  if (!benched) {
    log->error("{}", benched.error().message);
    return 2;
  }
  const bool anyNpu =
      std::any_of(benched->begin(), benched->end(), [](const BenchedBackend& b) { return b.npu; });
  const bool noop = anyNpu && underNoopShim();
  if (noop) {
    log->warn(
        "XRT noop shim (XCL_EMULATION_MODE=noop): nothing runs on an NPU, its times are "
        "not NPU speed");
  }
  const NpuCheckStart npuStart = startNpuCheck();
  if (auto measured = measureBench(*benched, *inputs, options); !measured) {
    log->error("{}", measured.error().message);
    return 2;
  }
  const nlohmann::json npuCheck = npuCheckSince(npuStart, noop);
  if (options.json) {
    printBenchJson(*benched, *inputs, options, npuCheck, out);
  } else {
    printBenchText(*benched, *inputs, options, npuCheck, noop, out);
  }
  return 0;
}

}  // namespace vigil
