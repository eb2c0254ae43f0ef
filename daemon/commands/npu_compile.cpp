#include "daemon/commands/npu_compile.h"

#include <fmt/format.h>

#include <ostream>

#include "daemon/commands/npu_selftest.h"
#include "detector/model_manifest.h"
#include "detector/npu/vitisai_runtime.h"

namespace vigil {

void addNpuCompileCommand(CLI::App& npu, NpuCompileOptions& options) {
  auto* cmd = npu.add_subcommand(
      "compile",
      "Compile a bundle's Vitis AI stage once into an EP-context model in the service's cache, "
      "so that the daemon's first start loads it instead of compiling (run it as the service "
      "user, after installing or updating Ryzen AI Software, the driver or the bundle)");
  cmd->add_option("bundle", options.bundle, "The model bundle (its NPU stage on runtime vitisai)")
      ->required();
  cmd->add_option("--config", options.config,
                  "cameras.yaml whose detector.onnxruntime and detector.vitisai (cache_dir) to "
                  "use (default: /etc/vigil/cameras.yaml when it exists)");
  cmd->add_option("--onnxruntime", options.onnxRuntime,
                  "ONNX Runtime with the Vitis AI EP (overrides the configuration's)");
}

int runNpuCompile(const NpuCompileOptions& options, std::ostream& out, std::ostream& err) {
  auto manifest = loadModelManifest(options.bundle);
  if (!manifest) {
    err << "npu compile: " << manifest.error().message << "\n";
    return 1;
  }
  auto made =
      compileVitisAiContext(*manifest, serviceVitisAiSettings(options.config, options.onnxRuntime));
  if (!made) {
    err << "npu compile: " << options.bundle << ": " << made.error().message << "\n";
    return 1;
  }
  out << fmt::format("npu compile: {} compiled in {:.1f} s ({} nodes on the NPU) into {}\n",
                     manifest->name, made->seconds, made->npuNodes, made->file.string());
  return 0;
}

}  // namespace vigil
