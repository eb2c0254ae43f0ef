#include "detector/npu/vitisai_plan.h"

#include <fmt/format.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

namespace vigil {

namespace {

std::string environmentVariable(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

std::uint64_t keyHash(std::string_view text, std::uint64_t h = 0xcbf29ce484222325ULL) {
  for (char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

// The target a generation needs for the integer compiler.
std::string targetOf(const std::string& generation) { return generation == "npu1" ? "X1" : "X2"; }

}  // namespace

std::filesystem::path defaultVitisAiCacheDir() {
  if (std::string dir = environmentVariable("CACHE_DIRECTORY"); !dir.empty()) {
    // systemd may list several, separated by ':'; the first is ours.
    return std::filesystem::path(dir.substr(0, dir.find(':'))) / "vitisai";
  }
  if (std::string dir = environmentVariable("XDG_CACHE_HOME"); !dir.empty()) {
    return std::filesystem::path(dir) / "vigil/vitisai";
  }
  std::string home = environmentVariable("HOME");
  return std::filesystem::path(home.empty() ? "/tmp" : home) / ".cache/vigil/vitisai";
}

std::optional<std::string> npuGeneration(const NpuEnvironment& env) {
  if (env.pciId == "1022:1502") return "npu1";
  if (env.pciId == "1022:17f0") return "npu2";
  return npuTargetOfDevice(env.deviceName);
}

std::string vitisAiCacheKey(const VitisAiCacheInputs& in) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const std::string* part : {&in.modelSha256, &in.ortVersion, &in.epLibrary, &in.driverVersion,
                                  &in.firmwareVersion, &in.target}) {
    h = keyHash(*part, h);
    h = keyHash(std::string_view("\0", 1), h);  // "ab"+"c" and "a"+"bc" differ
  }
  return fmt::format("{}-{:016x}", in.bundleName, h);
}

Expected<VitisAiPlan> planVitisAi(const NpuStageSpec& spec, const std::filesystem::path& bundleDir,
                                  const NpuEnvironment& env, const VitisAiSettings& settings) {
  VitisAiPlan plan;
  plan.compiler = spec.compiler;
  plan.cacheDir = settings.cacheDir.empty() ? defaultVitisAiCacheDir() : settings.cacheDir;
  const std::optional<std::string> generation = npuGeneration(env);
  const std::string seen =
      fmt::format("PCI id '{}', amdxdna device '{}'", env.pciId, env.deviceName);
  if (settings.target != "" && settings.target != "X1" && settings.target != "X2") {
    return makeError(ErrorCode::kInvalidArgument,
                     "detector.vitisai.target must be X1 or X2, got '{}'", settings.target);
  }
  if (!generation && settings.target.empty()) {
    return makeError(ErrorCode::kUnsupported,
                     "cannot tell which NPU this is ({}): expected 1022:1502 (XDNA: Phoenix, Hawk "
                     "Point) or 1022:17f0 (XDNA2: Strix, Krackan); set detector.vitisai.target "
                     "(X1 for XDNA, X2 for XDNA2) if the amdxdna driver is loaded",
                     seen);
  }
  const std::string target = settings.target.empty() ? targetOf(*generation) : settings.target;
  if (generation && settings.target != "" && settings.target != targetOf(*generation)) {
    return makeError(ErrorCode::kUnsupported,
                     "detector.vitisai.target {} contradicts the device ({}, an {} NPU needs {})",
                     settings.target, seen, *generation, targetOf(*generation));
  }
  if (spec.compiler == "bf16") {
    if (target == "X1") {
      return makeError(ErrorCode::kUnsupported,
                       "the BF16 flow runs on XDNA2 NPUs only (Strix, Krackan); this is an XDNA "
                       "NPU ({}): use an integer bundle such as yolox-nano-npu-xint8",
                       seen);
    }
    if (!spec.configFile.empty()) plan.configFile = bundleDir / spec.configFile;
    return plan;
  }
  plan.target = target;
  if (target == "X1") {
    if (settings.xclbin.empty()) {
      return makeError(ErrorCode::kUnsupported,
                       "an XDNA NPU (Phoenix, Hawk Point) needs target X1 and the 4x4 overlay: set "
                       "detector.vitisai.xclbin to Ryzen AI Software's "
                       "voe-4.0-*/xclbins/phoenix/4x4.xclbin");
    }
    plan.xclbin = settings.xclbin;
  }
  return plan;
}

std::vector<std::pair<std::string, std::string>> vitisAiProviderOptions(const VitisAiPlan& plan) {
  std::vector<std::pair<std::string, std::string>> options{
      {"cache_dir", plan.cacheDir.string()},
      {"cache_key", plan.cacheKey},
      {"enable_cache_file_io_in_mem", "0"},
  };
  if (!plan.target.empty()) options.emplace_back("target", plan.target);
  if (!plan.xclbin.empty()) options.emplace_back("xclbin", plan.xclbin.string());
  if (!plan.configFile.empty()) options.emplace_back("config_file", plan.configFile.string());
  return options;
}

std::vector<std::pair<std::string, std::string>> vitisAiSessionConfig() {
  return {{"session.disable_cpu_ep_fallback", "1"}};
}

std::filesystem::path vitisAiContextModel(const VitisAiPlan& plan) {
  return plan.cacheDir / (plan.cacheKey + ".ctx.onnx");
}

std::vector<std::pair<std::string, std::string>> vitisAiContextWriteConfig(
    const std::filesystem::path& file) {
  auto config = vitisAiSessionConfig();
  config.emplace_back("ep.context_enable", "1");
  config.emplace_back("ep.context_file_path", file.string());
  config.emplace_back("ep.context_embed_mode", "1");
  return config;
}

VitisAiSessionSource vitisAiSessionSource(const VitisAiPlan& plan,
                                          const std::filesystem::path& bundleModel) {
  const std::filesystem::path context = vitisAiContextModel(plan);
  std::error_code ec;
  const bool usable = std::filesystem::is_regular_file(context, ec) &&
                      std::filesystem::file_size(context, ec) > 0 && !ec;
  if (usable) return {context, true};
  return {bundleModel, false};
}

Expected<NpuNodeCounts> parseVitisAiReport(std::string_view text, const std::string& where) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("deviceStat") ||
      !doc["deviceStat"].is_array()) {
    return makeError(ErrorCode::kInvalidData,
                     "{}: not a Vitis AI EP operator report (no deviceStat list)", where);
  }
  NpuNodeCounts counts;
  bool sawAll = false;
  for (const nlohmann::json& d : doc["deviceStat"]) {
    if (!d.is_object() || !d.contains("name") || !d["name"].is_string() || !d.contains("nodeNum") ||
        !d["nodeNum"].is_number_integer()) {
      return makeError(ErrorCode::kInvalidData,
                       "{}: a deviceStat entry without a name or an integer nodeNum: {}", where,
                       d.dump());
    }
    const std::string name = d["name"].get<std::string>();
    const auto n = d["nodeNum"].get<std::int64_t>();
    if (name == "NPU") counts.npu = n;
    if (name == "CPU") counts.cpu = n;
    if (name == "all") {
      counts.all = n;
      sawAll = true;
    }
  }
  if (!sawAll) counts.all = counts.npu + counts.cpu;
  return counts;
}

std::optional<std::string> placementProblem(const NpuNodeCounts& counts, int minNpuNodes) {
  if (counts.npu == 0) {
    return fmt::format("the Vitis AI EP placed no node on the NPU ({} of {} on the CPU)",
                       counts.cpu, counts.all);
  }
  if (counts.npu < minNpuNodes) {
    return fmt::format("the Vitis AI EP placed {} nodes on the NPU, the bundle needs at least {}",
                       counts.npu, minNpuNodes);
  }
  return std::nullopt;
}

}  // namespace vigil
