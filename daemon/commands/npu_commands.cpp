#include "daemon/commands/npu_commands.h"

#include <fmt/format.h>

#include <fstream>
#include <ostream>
#include <sstream>

#include "daemon/base/log.h"
#include "daemon/base/model_location.h"
#include "daemon/commands/detector_cli.h"
#include "daemon/commands/served_certificate.h"
#include "daemon/commands/setup_checks.h"
#include "daemon/config/config_file.h"
#include "daemon/metrics/power.h"
#include "daemon/web/web_security.h"
#include "detector/backend.h"
#include "detector/backends/opencv_backend.h"
#include "detector/model_manifest.h"
#include "detector/npu/cpu_twin.h"
#include "detector/npu/npu_backend.h"
#include "detector/npu/npu_environment.h"
#include "detector/npu/vitisai_plan.h"
#ifdef VIGIL_WITH_XRT
#include "detector/npu/xrt_runtime.h"
#endif

namespace vigil {

namespace {

// The Vitis AI runtime's lines: the ONNX Runtime found and its EP, the target this NPU gets,
// the compile cache.
template <typename Line>
void printVitisAi(const NpuEnvironment& env, const VitisAiSettings& settings, Line&& line) {
  // ONNX Runtime's own words for a runtime without the EP would only repeat the line below.
  const auto npuLog = logger("npu");
  const auto level = npuLog->level();
  npuLog->set_level(spdlog::level::off);
  auto state = vitisAiRuntimeState(settings);
  npuLog->set_level(level);
  line("vitisai", state ? *state : "NOT USABLE: " + state.error().message);
  auto generation = npuGeneration(env);
  if (!settings.target.empty()) {
    line("vitisai target",
         fmt::format("{} (detector.vitisai.target){}", settings.target,
                     settings.xclbin.empty() ? "" : ", xclbin " + settings.xclbin.string()));
  } else {
    line("vitisai target",
         generation
             ? fmt::format("{} for this {} NPU (PCI {}, device {})",
                           *generation == "npu1" ? "X1 (needs detector.vitisai.xclbin)" : "X2",
                           *generation == "npu1" ? "XDNA" : "XDNA2",
                           env.pciId.empty() ? "unknown" : env.pciId,
                           env.deviceName.empty() ? "unknown" : env.deviceName)
             : std::string("unknown: no NPU recognised (set detector.vitisai.target)"));
  }
  const std::filesystem::path cache =
      settings.cacheDir.empty() ? defaultVitisAiCacheDir() : settings.cacheDir;
  line("vitisai cache",
       fmt::format("{} ({})", cache.string(),
                   std::filesystem::exists(cache) ? "exists" : "created at first compile"));
}

// One line of the report: the check's name in a column, then what was found.
struct DoctorLine {
  std::ostream& out;
  void operator()(std::string_view what, const std::string& value) const {
    out << fmt::format("{:<16} {}\n", what, value);
  }
};

// The driver, the device node and its permissions, the NPU and its firmware, XRT.
void printNpuDevice(const NpuEnvironment& env, const DoctorLine& line) {
  line("driver", env.driverLoaded ? "amdxdna loaded" : "amdxdna not loaded");
  line("device", !env.deviceExists      ? env.deviceNode.string() + ": absent"
                 : env.deviceAccessible ? env.deviceNode.string() + ": present, read/write allowed"
                                        : fmt::format("{}: present, NO ACCESS (group {})",
                                                      env.deviceNode.string(), env.deviceGroup));
  if (!env.deviceName.empty()) {
    auto target = npuTargetOfDevice(env.deviceName);
    line("npu", fmt::format("{} (bundle target {}), firmware {}", env.deviceName,
                            target ? *target : "unknown",
                            env.firmwareVersion.empty() ? "unknown" : env.firmwareVersion));
  }
#ifdef VIGIL_WITH_XRT
  line("xrt", fmt::format("{} headers, {} API", xrtVersion(), xrtApiLevel()));
#else
  line("xrt", "not in this build (install libxrt-dev and reconfigure)");
#endif
}

// What the process gets from its surroundings: the memlock limit, xrt.ini, emulation variables.
void printProcessSetup(const NpuEnvironment& env, const DoctorLine& line) {
  line("memlock", env.memlockBytes ? fmt::format("{} KiB", *env.memlockBytes / 1024)
                                   : std::string("unlimited"));
  line("xrt.ini", env.xrtIniInCwd          ? "PRESENT in the working directory"
                  : env.xrtIniPath.empty() ? "none"
                                           : "XRT_INI_PATH=" + env.xrtIniPath);
  if (!env.emulationMode.empty()) {
    line("emulation",
         fmt::format("XCL_EMULATION_MODE={} XILINX_XRT={}", env.emulationMode, env.xilinxXrt));
  }
}

void printPowerSources(const std::filesystem::path& root, const DoctorLine& line) {
  PowerMonitorOptions powerOptions;
  powerOptions.root = root;
  PowerMonitor power(powerOptions);
  std::istringstream sources(power.description());
  for (std::string s; std::getline(sources, s);) line("power", s);
}

// Every file of the bundle against its sha256; false when one does not match.
bool checkBundleFiles(const ModelManifest& manifest, const DoctorLine& line) {
  bool ok = true;
  for (const ModelFile& f : manifest.files) {
    auto check = verifyModelFile(manifest, f, false);
    if (!check) {
      line("bundle", "INVALID: " + check.error().message);
      ok = false;
    }
  }
  return ok;
}

// What `auto` runs on the CPU for a bundle that names a CPU twin (detector/npu/cpu_twin.h). A
// refused twin is no error: the bundle's own stages answer, as the line says.
void describeCpuTwin(const ModelManifest& manifest, const DoctorLine& line) {
  if (!manifest.cpuTwin) return;
  auto twin = loadCpuTwin(manifest);
  line("cpu twin", twin ? fmt::format("{} ({}), sha256 checked: auto runs it on the CPU while "
                                      "the NPU is not in use",
                                      twin->name, twin->directory().string())
                        : fmt::format("refused: {}; auto runs the bundle's own stages on the CPU",
                                      twin.error().message));
}

// Which stage the NPU runs and how; false when an NPU stage has no expected canary output.
bool describeBundleStages(const ModelManifest& manifest, const DoctorLine& line) {
  const StageSpec* npu = manifest.npuStage();
  if (npu == nullptr) {
    line("bundle", fmt::format("{}: {} stage(s), none for the NPU (CPU only)",
                               manifest.manifestPath.string(), manifest.stages.size()));
    return true;
  }
  if (npu->npu->runtime == "vitisai") {
    line("bundle", fmt::format("{}: stage '{}' for ONNX Runtime's Vitis AI EP ({} compiler, at "
                               "least {} nodes on the NPU), canary {}",
                               manifest.manifestPath.string(), npu->name, npu->npu->compiler,
                               npu->npu->minNpuNodes, npu->npu->canaryImage));
    return true;
  }
  line("bundle",
       fmt::format(
           "{}: stage '{}' for {} ({}, kernel {}, XRT >= {}.{}), canary {}",
           manifest.manifestPath.string(), npu->name, npu->npu->target, npu->npu->flow,
           npu->npu->kernel, npu->npu->minXrtMajor, npu->npu->minXrtMinor,
           npu->npu->canaryExpected.empty() ? "WITHOUT expected output" : "with expected output"));
#ifdef VIGIL_WITH_XRT
  if (!xrtRunsFlow(npu->npu->flow)) line("problem", elfFlowUnsupported(npu->npu->flow).message);
#endif
  return !npu->npu->canaryExpected.empty();
}

// Creates the npu backend, which opens the NPU, loads the bundle and runs its canary; false
// when that fails.
bool runDoctorCanary(const ModelManifest& manifest, const VitisAiSettings& vitisai,
                     const DoctorLine& line) {
  BackendOptions backendOptions;
  backendOptions.vitisai = vitisai;
  auto backend = createBackend("npu", manifest, backendOptions);
  if (!backend) {
    line("canary", "FAILED: " + backend.error().message);
    return false;
  }
  line("canary", "passed on " + (*backend)->device());
  if (const NpuStats& stats = npuStats(); stats.graphNodesNpu.load() >= 0) {
    line("npu nodes", fmt::format("{} on the NPU, {} on the CPU (the Vitis AI EP's report)",
                                  stats.graphNodesNpu.load(), stats.graphNodesCpu.load()));
  }
  return true;
}

// The configuration doctor checks: the one given, or the installed one when there is one and no
// --model says which bundle to check; empty when none.
std::filesystem::path doctorConfigFile(const DoctorCommandOptions& options) {
  if (!options.config.empty()) return options.config;
  if (!options.model.empty() || !std::filesystem::exists(kInstalledConfig)) return {};
  return kInstalledConfig;
}

// The Vitis AI settings the service would use: the configuration's `detector.onnxruntime` and
// `detector.vitisai` (target, xclbin, cache_dir), so the canary and the cache line are the
// service's; --onnxruntime wins over the configuration's ONNX Runtime.
VitisAiSettings doctorVitisAiSettings(const DoctorCommandOptions& options, const DoctorLine& line) {
  VitisAiSettings settings;
  if (const std::filesystem::path file = doctorConfigFile(options); !file.empty()) {
    if (auto config = loadConfig(file)) {
      settings = config->detector.vitisai;
      line("vitisai from", file.string() + " (detector.onnxruntime, detector.vitisai)");
    }  // an invalid file is reported with its reason by checkConfiguration
  }
  if (!options.onnxRuntime.empty()) settings.onnxRuntime = options.onnxRuntime;
  return settings;
}

// The configuration (given, or the installed one when there is one and no --model says which
// bundle to check) and what it names:
// cameras and broker. False when it is invalid or something it names is out of reach; the model
// bundle it names, if any, goes to `model`.
bool checkConfiguration(const DoctorCommandOptions& options, const DoctorLine& line,
                        std::string& model) {
  const std::filesystem::path file =
      std::filesystem::path(options.config.empty() ? kInstalledConfig : options.config);
  if (options.config.empty() && !options.model.empty()) {
    line("config", "not checked: --model names the bundle (--config FILE checks one)");
    return true;
  }
  if (options.config.empty() && !std::filesystem::exists(file)) {
    line("config", file.string() + ": absent (--config FILE checks another)");
    return true;
  }
  auto config = loadConfig(file);
  if (!config) {
    line("config", "INVALID: " + config.error().message);
    return false;
  }
  line("config", fmt::format("{}: valid, node {}, {} camera(s){}", file.string(), config->node,
                             config->cameras.size(), config->mqtt.enabled ? ", MQTT" : ""));
  for (const std::string& warning : config->warnings) line("config", "warning: " + warning);
  line("http", describeHttpAccess(config->http));
  if (!config->detector.model.empty()) model = config->detector.model;
  bool ok = true;
  std::vector<SetupFinding> findings = checkSetup(*config);
  for (SetupFinding& f : checkServedCertificate(config->http, {.hostNames = localNames()})) {
    findings.push_back(std::move(f));
  }
  for (const SetupFinding& f : findings) {
    line(f.what, f.found);
    ok = ok && f.ok;
  }
  line("setup", ok ? (config->mqtt.enabled ? "every camera and the broker answer"
                                           : "every camera answers (no mqtt section)")
                   : "NOT READY: see above (the daemon retries cameras and the broker; a "
                     "certificate must be fixed)");
  return ok;
}

}  // namespace

void addDoctorCommand(CLI::App& app, DoctorCommandOptions& options) {
  auto* cmd = app.add_subcommand("doctor",
                                 "Check the NPU driver, device, XRT, limits, power sources, "
                                 "the configuration's cameras and broker, and a model bundle");
  cmd->add_option("--config", options.config,
                  "cameras.yaml to check (default: /etc/vigil/cameras.yaml when it exists)");
  cmd->add_option("--model", options.model,
                  "Model bundle directory or model.yaml to validate (default: the "
                  "configuration's detector.model, else the built-in one)");
  cmd->add_flag("--run-canary", options.runCanary,
                "Also open the NPU, load the bundle and run its canary");
  cmd->add_option("--onnxruntime", options.onnxRuntime,
                  "ONNX Runtime with the Vitis AI EP: libonnxruntime.so or its directory "
                  "(default: the configuration's detector.onnxruntime, $VIGIL_ORT_ROOT, then "
                  "the system's)");
}

int runDoctorCommand(const DoctorCommandOptions& options, std::ostream& out) {
  NpuEnvironment env = probeNpuEnvironment(options.root);
  const DoctorLine line{out};
  // The configuration first: what every box needs.
  std::string model;
  const bool setupOk = checkConfiguration(options, line, model);

  // A box without an NPU is a normal case: one line, unless asked; what an NPU would need is
  // said as that, not as problems to alarm its owner.
  const bool noNpu = !env.deviceExists && !env.driverLoaded;
  const bool npuDetails = !noNpu || options.verbose || options.runCanary;
  std::ostringstream unsaid;
  const DoctorLine npuLine{npuDetails ? out : unsaid};
  printNpuDevice(env, npuLine);
  const VitisAiSettings vitisai = doctorVitisAiSettings(options, npuLine);
  printVitisAi(env, vitisai, npuLine);
  printProcessSetup(env, npuLine);
  printPowerSources(options.root, npuLine);
  const std::vector<std::string> problems = npuEnvironmentProblems(env);
  for (const std::string& p : problems) npuLine(noNpu ? "for an NPU" : "problem", p);
  if (noNpu) {
    line("verdict",
         "no NPU on this machine: Vigil runs on the CPU (backend auto takes cpu-ort, "
         "else cpu)" +
             std::string(npuDetails ? "; the lines \"for an NPU\" matter only on a box with one"
                                    : "; --verbose says what an NPU would need"));
  } else {
    line("verdict", problems.empty() ? "the NPU is ready for Vigil"
                                     : "an NPU is here but not ready: fix the problems above");
  }

  if (!options.model.empty()) model = options.model;
  if (model.empty()) model = defaultModelPath();
  auto manifest = loadModelManifest(model);
  if (!manifest) {
    line("bundle", "INVALID: " + manifest.error().message);
    return 1;
  }
  bool ok = checkBundleFiles(*manifest, line);
  if (!describeBundleStages(*manifest, line)) ok = false;
  if (ok) line("bundle", "valid: every file matches its sha256");
  describeCpuTwin(*manifest, line);
  if (ok && options.runCanary && !runDoctorCanary(*manifest, vitisai, line)) return 1;
  return ok && setupOk ? 0 : 1;
}

void addStageRunCommand(CLI::App& app, StageRunOptions& options) {
  auto* cmd = app.add_subcommand("stage-run",
                                 "Run one ONNX file on the CPU reference (raw "
                                 "float32 files; used by scripts/split-model.py)");
  cmd->group("");  // a tool for the scripts, not in the help
  cmd->add_option("--onnx", options.onnx, "ONNX file")->required();
  cmd->add_option("--input-name", options.inputName, "Input tensor name")->required();
  cmd->add_option("--shape", options.shape, "Input shape, comma-separated")->required();
  cmd->add_option("--input", options.input, "Raw float32 input file")->required();
  cmd->add_option("--output", options.outputs, "name=path of each output to write")->required();
}

int runStageRunCommand(const StageRunOptions& options, std::ostream& out) {
  StageSpec spec;
  spec.name = "stage-run";
  TensorSpec in;
  in.name = options.inputName;
  std::stringstream dims(options.shape);
  for (std::string d; std::getline(dims, d, ',');) in.shape.push_back(std::stoll(d));
  spec.inputs.push_back(in);
  std::vector<std::string> paths;
  for (const std::string& o : options.outputs) {
    auto eq = o.find('=');
    if (eq == std::string::npos) {
      out << "stage-run: --output wants name=path, got " << o << "\n";
      return 2;
    }
    TensorSpec t;
    t.name = o.substr(0, eq);
    spec.outputs.push_back(t);
    paths.push_back(o.substr(eq + 1));
  }
  std::vector<Tensor> inputs(1);
  inputs[0].resize(in.shape);
  std::ifstream file(options.input, std::ios::binary);
  file.read(reinterpret_cast<char*>(inputs[0].data.data()),
            static_cast<std::streamsize>(inputs[0].data.size() * sizeof(float)));
  if (!file) {
    out << "stage-run: " << options.input << ": not " << inputs[0].data.size()
        << " float32 values\n";
    return 2;
  }
  auto stage = OnnxStage::load(options.onnx, spec);
  if (!stage) {
    out << "stage-run: " << stage.error().message << "\n";
    return 2;
  }
  // The outputs have no shapes in the spec: OnnxStage sizes them from the network.
  std::vector<Tensor> outputs(spec.outputs.size());
  if (auto ok = (*stage)->run(inputs, outputs); !ok) {
    out << "stage-run: " << ok.error().message << "\n";
    return 2;
  }
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    std::ofstream o(paths[i], std::ios::binary);
    o.write(reinterpret_cast<const char*>(outputs[i].data.data()),
            static_cast<std::streamsize>(outputs[i].data.size() * sizeof(float)));
    if (!o) {
      out << "stage-run: cannot write " << paths[i] << "\n";
      return 2;
    }
  }
  return 0;
}

}  // namespace vigil
