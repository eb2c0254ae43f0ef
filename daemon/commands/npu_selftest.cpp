#include "daemon/commands/npu_selftest.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>
#include <ostream>
#include <set>

#include "daemon/base/metrics.h"
#include "daemon/base/model_location.h"
#include "daemon/config/config_file.h"
#include "detector/backend.h"
#include "detector/npu/npu_backend.h"
#include "detector/npu/npu_busy_time.h"
#include "detector/npu/npu_environment.h"
#include "detector/preprocess.h"
#include "detector/verify.h"
#ifdef VIGIL_WITH_XRT
#include "detector/npu/xrt_runtime.h"
#endif

namespace vigil {

namespace {

using nlohmann::json;
using SelftestClock = std::chrono::steady_clock;

// Where an install keeps its bundles: beside the built-in model, and the package's data.
std::vector<std::filesystem::path> defaultModelPlaces() {
  std::vector<std::filesystem::path> places;
  if (!builtInModelDir().empty()) places.push_back(builtInModelDir().parent_path());
  places.emplace_back("/usr/share/vigil/models");
  return places;
}

std::string firstLineOf(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

json orNull(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

json versionsReport(const NpuEnvironment& env, const VitisAiSettings& settings) {
  json v;
  v["kernel"] = firstLineOf("/proc/sys/kernel/osrelease");
  v["amdxdna"] = !env.driverLoaded           ? json("not loaded")
                 : env.driverVersion.empty() ? json("loaded (in-tree, no version file)")
                                             : json(env.driverVersion);
  v["firmware"] = orNull(env.firmwareVersion);
  v["npu_device"] = orNull(env.deviceName);
  v["npu_pci_id"] = orNull(env.pciId);
#ifdef VIGIL_WITH_XRT
  v["xrt"] = fmt::format("{} headers, {} API", xrtVersion(), xrtApiLevel());
#else
  v["xrt"] = "not in this build";
#endif
  auto ep = vitisAiRuntimeState(settings);
  v["vitisai_ep"] = ep ? *ep : "NOT USABLE: " + ep.error().message;
  v["onnxruntime"] = nullptr;  // cpu-ort's, once a bundle has loaded it
  return v;
}

// Wall and process CPU time of each measured inference, in milliseconds.
struct Timings {
  std::vector<double> wallMs;
  std::vector<double> cpuMs;
};

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

json figures(const Timings& t) {
  return {{"latency_ms",
           {{"median", quantile(t.wallMs, 0.5)},
            {"p95", quantile(t.wallMs, 0.95)},
            {"min", quantile(t.wallMs, 0)},
            {"max", quantile(t.wallMs, 1)}}},
          {"host_cpu_ms_per_inference", quantile(t.cpuMs, 0.5)},
          {"inferences", t.wallMs.size()}};
}

// One inference, timed; false when it failed.
bool timedInfer(InferenceBackend& backend, const Tensor& input, Tensor& output, Timings& t) {
  const double cpu0 = processCpuSeconds();
  const auto t0 = SelftestClock::now();
  const bool ok = static_cast<bool>(backend.infer(input, output));
  t.wallMs.push_back(std::chrono::duration<double, std::milli>(SelftestClock::now() - t0).count());
  t.cpuMs.push_back((processCpuSeconds() - cpu0) * 1000.0);
  return ok;
}

// The bundle's canary photograph letterboxed (a plain grey picture for a bundle without one):
// the input of every measured inference.
Tensor selftestInput(const ModelManifest& manifest) {
  const StageSpec* stage = manifest.npuStage();
  cv::Mat image;
  if (stage != nullptr && !stage->npu->canaryImage.empty()) {
    image = cv::imread((manifest.directory() / stage->npu->canaryImage).string());
  }
  if (image.empty()) {
    image = cv::Mat(manifest.input.height, manifest.input.width, CV_8UC3,
                    cv::Scalar::all(manifest.input.padValue));
  }
  Tensor input;
  Letterbox(manifest.input).run(image, input);
  return input;
}

// What the NPU did for one bundle while it ran: placement, canary agreement, NaN/Inf, busy time.
void npuFindings(const NpuStageSpec& spec, std::uint64_t nonFinite, const NpuClientUsage& before,
                 json& b) {
  const NpuStats& stats = npuStats();
  b["placement"] = stats.graphNodesNpu.load() < 0 ? json(nullptr)
                                                  : json{{"npu_nodes", stats.graphNodesNpu.load()},
                                                         {"cpu_nodes", stats.graphNodesCpu.load()}};
  b["canary"] = {{"max_abs_diff_to_cpu_reference", stats.referenceMaxAbsDiff.load()},
                 {"tolerance", spec.canaryTolerance},
                 {"comparisons", stats.referenceComparisons.load()}};
  b["non_finite_outputs"] = nonFinite;
  const NpuClientUsage after = npuClientUsage();
  b["busy_time"] = {{"amdxdna_clients", after.clients},
                    {"before_ns", before.busyNs ? json(*before.busyNs) : json(nullptr)},
                    {"after_ns", after.busyNs ? json(*after.busyNs) : json(nullptr)},
                    {"grew", before.busyNs && after.busyNs ? json(*after.busyNs > *before.busyNs)
                                                           : json(nullptr)}};
}

// The NPU and cpu-ort in alternation on the bundle's input; the NPU's figures go into `b`, the
// CPU's are returned (the NPU's side is skipped when it was refused).
json alternate(InferenceBackend* npu, InferenceBackend* cpu, const ModelManifest& manifest,
               int iterations, json& b) {
  const Tensor input = selftestInput(manifest);
  Tensor npuOut, cpuOut;
  Timings npuTimes, cpuTimes;
  std::uint64_t nonFinite = 0, failures = 0;
  const NpuClientUsage before = npuClientUsage();
  for (int i = -1; i < iterations; ++i) {  // round -1 warms both up, unmeasured
    Timings scratch;
    if (npu != nullptr) {
      if (!timedInfer(*npu, input, npuOut, i < 0 ? scratch : npuTimes)) ++failures;
      if (!checkFinite(npuOut.values(), "npu output")) ++nonFinite;
    }
    if (cpu != nullptr) timedInfer(*cpu, input, cpuOut, i < 0 ? scratch : cpuTimes);
  }
  if (npu != nullptr) {
    b["npu"] = figures(npuTimes);
    b["npu"]["failed_inferences"] = failures;
    npuFindings(*manifest.npuStage()->npu, nonFinite, before, b);
  }
  return cpu != nullptr ? figures(cpuTimes) : json(nullptr);
}

// One bundle: the npu backend's creation (or its refusal), then the alternation.
json bundleReport(const std::filesystem::path& dir, const NpuSelftestOptions& options,
                  const VitisAiSettings& settings, json& cpuOrt) {
  json b;
  b["path"] = dir.string();
  auto manifest = loadModelManifest(dir);
  if (!manifest) {
    b["name"] = dir.filename().string();
    b["outcome"] = "invalid";
    b["why"] = manifest.error().message;
    return b;
  }
  const NpuStageSpec& spec = *manifest->npuStage()->npu;
  b["name"] = manifest->name;
  b["runtime"] = spec.runtime;
  b["compiler"] = orNull(spec.compiler);
  BackendOptions npuOptions;
  npuOptions.threads = 1;
  npuOptions.vitisai = settings;
  npuOptions.compareWithReference = true;
  NpuStats& stats = npuStats();
  stats.referenceMaxAbsDiff.store(0);
  stats.referenceComparisons.store(0);
  const auto t0 = SelftestClock::now();
  auto npu = createBackend("npu", *manifest, npuOptions);
  b["session_seconds"] = std::chrono::duration<double>(SelftestClock::now() - t0).count();
  b["outcome"] = npu ? "ran" : "refused";
  if (!npu) {
    b["why"] = npu.error().message;
    b["error"] = std::string(errorCodeName(npu.error().code));
  } else {
    b["device"] = (*npu)->device();
  }
  BackendOptions cpuOptions;
  cpuOptions.threads = 1;
  auto cpu = createBackend("cpu-ort", *manifest, cpuOptions);
  json cpuFigures = alternate(npu ? npu->get() : nullptr, cpu ? cpu->get() : nullptr, *manifest,
                              options.iterations, b);
  if (!cpu) cpuFigures = {{"error", cpu.error().message}};
  if (cpu) cpuOrt["device"] = (*cpu)->device();
  cpuOrt["bundles"][manifest->name] = cpuFigures;
  if (npu && cpu) {
    b["npu_vs_cpu_ort_median_latency"] =
        b["npu"]["latency_ms"]["median"].get<double>() /
        std::max(1e-9, cpuFigures["latency_ms"]["median"].get<double>());
  }
  return b;
}

std::string timestampUtc() {
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

// The summary without --json: one line per bundle and its cpu-ort figures.
void printSummary(const json& report, std::ostream& out) {
  for (const json& b : report["bundles"]) {
    std::string what = b["outcome"].get<std::string>();
    if (b.contains("why")) what += ": " + b["why"].get<std::string>();
    out << fmt::format("{:<24} {}\n", b["name"].get<std::string>(), what);
    const json& cpu = report["cpu-ort"]["bundles"][b["name"].get<std::string>()];
    if (cpu.contains("latency_ms")) {
      out << fmt::format(
          "{:<24} cpu-ort median {:.2f} ms, p95 {:.2f} ms, host CPU {:.2f} ms per "
          "inference\n",
          "", cpu["latency_ms"]["median"].get<double>(), cpu["latency_ms"]["p95"].get<double>(),
          cpu["host_cpu_ms_per_inference"].get<double>());
    }
  }
}

}  // namespace

std::vector<std::filesystem::path> npuBundlesIn(const std::vector<std::filesystem::path>& places) {
  std::set<std::filesystem::path> found;
  auto consider = [&](const std::filesystem::path& dir) {
    std::error_code ec;
    if (!std::filesystem::exists(dir / "model.yaml", ec)) return;
    auto manifest = loadModelManifest(dir);
    // An invalid bundle is listed too: the report says why it is invalid.
    if (!manifest || manifest->npuStage() != nullptr) {
      found.insert(std::filesystem::weakly_canonical(dir, ec));
    }
  };
  for (const std::filesystem::path& place : places) {
    std::error_code ec;
    consider(place);
    if (!std::filesystem::is_directory(place, ec)) continue;
    for (const auto& entry : std::filesystem::directory_iterator(place, ec)) {
      if (entry.is_directory(ec)) consider(entry.path());
    }
  }
  return {found.begin(), found.end()};
}

json npuSelftestReport(const NpuSelftestOptions& options) {
  const VitisAiSettings settings = serviceVitisAiSettings(options.config, options.onnxRuntime);
  const NpuEnvironment env = probeNpuEnvironment();
  json report;
  report["schema"] = 1;
  report["vigil"] = VIGIL_VERSION;
  report["created"] = timestampUtc();
  report["versions"] = versionsReport(env, settings);
  report["npu_problems"] = npuEnvironmentProblems(env);
  report["bundles"] = json::array();
  json cpuOrt;
  cpuOrt["threads"] = 1;
  cpuOrt["iterations"] = options.iterations;
  cpuOrt["bundles"] = json::object();
  std::vector<std::filesystem::path> places(options.models.begin(), options.models.end());
  if (places.empty()) places = defaultModelPlaces();
  for (const std::filesystem::path& dir : npuBundlesIn(places)) {
    report["bundles"].push_back(bundleReport(dir, options, settings, cpuOrt));
  }
  if (cpuOrt.contains("device")) report["versions"]["onnxruntime"] = cpuOrt["device"];
  report["cpu-ort"] = cpuOrt;
  return report;
}

VitisAiSettings serviceVitisAiSettings(const std::string& configFile,
                                       const std::string& onnxRuntime) {
  VitisAiSettings settings;
  const std::filesystem::path file = configFile.empty() ? kInstalledConfig : configFile;
  if (!configFile.empty() || std::filesystem::exists(file)) {
    if (auto config = loadConfig(file)) settings = config->detector.vitisai;
  }
  if (!onnxRuntime.empty()) settings.onnxRuntime = onnxRuntime;
  return settings;
}

CLI::App& addNpuCommand(CLI::App& app, NpuSelftestOptions& options) {
  auto* npu = app.add_subcommand("npu", "NPU tools");
  npu->require_subcommand(1);
  auto* cmd = npu->add_subcommand(
      "selftest",
      "Try every NPU bundle of the install and report what happened, against cpu-ort, as JSON "
      "a bug report can carry (no camera pictures, no secrets)");
  cmd->add_flag("--json", options.json, "Print the JSON report instead of the summary");
  cmd->add_option("--out", options.out, "Also write the JSON report to this file");
  cmd->add_option("--model", options.models,
                  "A bundle, or a directory of bundles (repeatable; default: the install's)");
  cmd->add_option("--config", options.config,
                  "cameras.yaml whose detector.onnxruntime and detector.vitisai to use "
                  "(default: /etc/vigil/cameras.yaml when it exists)");
  cmd->add_option("--onnxruntime", options.onnxRuntime,
                  "ONNX Runtime with the Vitis AI EP (overrides the configuration's)");
  cmd->add_option("--iterations", options.iterations, "Measured inferences per backend")
      ->check(CLI::Range(1, 10000));
  return *npu;
}

int runNpuSelftest(const NpuSelftestOptions& options, std::ostream& out) {
  const json report = npuSelftestReport(options);
  if (!options.out.empty()) {
    std::ofstream file(options.out);
    file << report.dump(2) << "\n";
    if (!file) {
      out << "npu selftest: cannot write " << options.out << "\n";
      return 2;
    }
  }
  if (options.json) {
    out << report.dump(2) << "\n";
  } else {
    printSummary(report, out);
  }
  // Out now, in one piece: left in the buffer until exit, the report's tail would come after
  // whatever the process prints while it ends (under ASan, LeakSanitizer's summary came between
  // the first 4 KiB and the rest when both went to one file).
  out.flush();
  if (report["bundles"].empty()) {
    out << "npu selftest: no NPU bundle found (--model DIR names one)\n";
    return 1;
  }
  return 0;
}

}  // namespace vigil
