#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <string>

namespace vigil {

struct NpuCompileOptions {
  std::string bundle;       // a model bundle whose NPU stage runs on the Vitis AI EP
  std::string config;       // cameras.yaml for detector.onnxruntime/vitisai; empty: installed one
  std::string onnxRuntime;  // overrides the configuration's detector.onnxruntime
};

// `vigil npu compile BUNDLE` under `npu`.
void addNpuCompileCommand(CLI::App& npu, NpuCompileOptions& options);

// Compiles the bundle's Vitis AI stage once into an EP-context model in the service's cache
// (compileVitisAiContext), for the daemon to load instead of compiling at its first start. Says
// where and how long; 0 when written, 1 when refused (the reason on `err`: no Vitis AI EP here,
// no node on the NPU, not a Vitis AI bundle).
int runNpuCompile(const NpuCompileOptions& options, std::ostream& out, std::ostream& err);

}  // namespace vigil
