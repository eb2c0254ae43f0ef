#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "detector/model_manifest.h"
#include "detector/npu/npu_environment.h"
#include "foundation/error.h"

namespace vigil {

// What Vigil tells ONNX Runtime's Vitis AI execution provider, decided before any session
// exists, from the bundle, the device and the configuration. Pure functions: every choice here
// is unit-tested without an NPU. Sources: ../shared/notes/npu-route.md sections 1, 5 and 6.

// The user's settings for the Vitis AI runtime (config `detector.onnxruntime`,
// `detector.vitisai`).
struct VitisAiSettings {
  std::string onnxRuntime;         // libonnxruntime.so or its directory; empty: $VIGIL_ORT_ROOT
  std::string target;              // "" (from the device), "X1" or "X2"
  std::filesystem::path xclbin;    // the X1 overlay (Phoenix/Hawk Point), from Ryzen AI Software
  std::filesystem::path cacheDir;  // empty: defaultVitisAiCacheDir()

  bool operator==(const VitisAiSettings&) const = default;
};

// $CACHE_DIRECTORY/vitisai (systemd's CacheDirectory=), else $XDG_CACHE_HOME/vigil/vitisai,
// else ~/.cache/vigil/vitisai.
std::filesystem::path defaultVitisAiCacheDir();

// The NPU generation of this machine: "npu1" (XDNA: Phoenix, Hawk Point; PCI 1022:1502) or
// "npu2" (XDNA2: Strix, Strix Halo, Krackan; PCI 1022:17f0), from the PCI id, else amdxdna's
// device name; nullopt: no NPU recognised.
std::optional<std::string> npuGeneration(const NpuEnvironment& env);

// What makes a compiled model stale: the model, the runtime that compiled it and the driver
// and firmware it was compiled for (AMD: caches must not be reused across EP or driver versions).
struct VitisAiCacheInputs {
  std::string bundleName;
  std::string modelSha256;
  std::string ortVersion;       // the loaded ONNX Runtime's GetVersionString()
  std::string epLibrary;        // identity of libonnxruntime_vitisai_ep.so: size and mtime
  std::string driverVersion;    // /sys/module/amdxdna/version, else the kernel release
  std::string firmwareVersion;  // amdxdna's fw_version
  std::string target;           // X1 / X2
};

// "<bundle>-<FNV-1a 64 of every input, 16 hex>": any change gives a new key, so an update
// recompiles instead of loading a stale cache.
std::string vitisAiCacheKey(const VitisAiCacheInputs& inputs);

// Everything decided for one session.
struct VitisAiPlan {
  std::string compiler;              // "bf16" (float model) or "int8" (QDQ model)
  std::string target;                // "X1" or "X2"; empty for bf16 (no target option)
  std::filesystem::path xclbin;      // X1 only
  std::filesystem::path configFile;  // bf16: the BF16 compiler settings
  std::filesystem::path cacheDir;
  std::string cacheKey;
};

// Chooses target and files. Refuses (kUnsupported, with the fix) BF16 on an XDNA NPU, X1 without
// an xclbin, an unknown NPU generation without `settings.target`, a target that contradicts the
// device.
Expected<VitisAiPlan> planVitisAi(const NpuStageSpec& spec, const std::filesystem::path& bundleDir,
                                  const NpuEnvironment& env, const VitisAiSettings& settings);

// The provider options, in the order they are logged: cache_dir, cache_key,
// enable_cache_file_io_in_mem=0 (else the compiled model lives in memory only and no other
// process can reuse it), then target (+ xclbin) for int8 or config_file for bf16.
std::vector<std::pair<std::string, std::string>> vitisAiProviderOptions(const VitisAiPlan& plan);

// The session config entries: strict placement (session.disable_cpu_ep_fallback=1: creation
// fails when a node would be left for the CPU).
std::vector<std::pair<std::string, std::string>> vitisAiSessionConfig();

// The EP-context model (ONNX Runtime's compiled-model format, AMD's recommended way to carry a
// compile across processes): `vigil npu compile` writes it once, the runtime loads it instead
// of compiling. Kept beside the EP's cache, under the same key, so a new model, EP, driver or
// firmware makes a new one: <cacheDir>/<cacheKey>.ctx.onnx.
std::filesystem::path vitisAiContextModel(const VitisAiPlan& plan);

// The session config entries that make creating a session write the EP-context model `file`
// (the compiled model embedded in it), beside the strict placement of vitisAiSessionConfig().
std::vector<std::pair<std::string, std::string>> vitisAiContextWriteConfig(
    const std::filesystem::path& file);

// What a session is created from: the EP-context model when one for this plan's key is present
// and not empty (a half-written one from a killed compile is passed over), else the bundle's
// model, compiled then.
struct VitisAiSessionSource {
  std::filesystem::path model;
  bool fromContext = false;
};
VitisAiSessionSource vitisAiSessionSource(const VitisAiPlan& plan,
                                          const std::filesystem::path& bundleModel);

// The EP's operator report (XLNX_ONNX_EP_REPORT_FILE, written into the cache directory):
// `deviceStat: [{name: all|CPU|NPU, nodeNum, ...}]`.
struct NpuNodeCounts {
  std::int64_t npu = 0;
  std::int64_t cpu = 0;
  std::int64_t all = 0;
};
// `where` names the file in errors. kInvalidData when it is not that format.
Expected<NpuNodeCounts> parseVitisAiReport(std::string_view json, const std::string& where);

// Why these counts are not an NPU run: no node on the NPU, or fewer than the bundle's
// min_npu_nodes (nodes left for the CPU already fail session creation, see
// vitisAiSessionConfig). nullopt when fine.
std::optional<std::string> placementProblem(const NpuNodeCounts& counts, int minNpuNodes);

}  // namespace vigil
