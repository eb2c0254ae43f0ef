#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

namespace vigil {

// `vigil doctor`: what the NPU path needs and what this machine offers, what the configuration
// names and whether this box reaches it, one line per check.
struct DoctorCommandOptions {
  std::string config;  // cameras.yaml; empty: the installed one if it exists, without --model
  std::string model;   // a model bundle to validate; empty: the config's, else the default model
  bool runCanary = false;  // also create the npu backend (open, load, canary)
  // What an NPU would need, on a box without one (with one, or with --run-canary, it is always
  // said); without it such a box gets one line. The command line's -v/--verbose sets it.
  bool verbose = false;
  // The ONNX Runtime of the Vitis AI EP (--onnxruntime); empty: the configuration's
  // detector.onnxruntime, whose detector.vitisai (target, xclbin, cache_dir) doctor uses too.
  std::string onnxRuntime;
  std::filesystem::path root = "/";  // not an option: tests point it at a fake /dev, /sys
};

void addDoctorCommand(CLI::App& app, DoctorCommandOptions& options);

// Prints driver, device node and permissions, XRT version and API level, the Vitis AI runtime
// (ONNX Runtime found, its EP, the NPU target and compile cache), memlock limit, xrt.ini and
// emulation variables, power sources; the configuration's validity, each camera's source and the
// MQTT broker (checkSetup); and the bundle's validation. Returns 0 when the configuration is
// valid with everything it names in reach and the bundle is valid (and its canary passed with
// --run-canary), 1 otherwise; problems of the NPU are reported but are not an error by
// themselves (a CPU-only host is fine).
int runDoctorCommand(const DoctorCommandOptions& options, std::ostream& out);

// `vigil stage-run`: one ONNX file on the CPU reference with raw float32 files in and out. The
// reference runner of scripts/split-model.py (the canary's expected output).
struct StageRunOptions {
  std::string onnx;
  std::string inputName;
  std::string shape;                 // comma-separated, e.g. 1,3,416,416
  std::string input;                 // raw float32 file
  std::vector<std::string> outputs;  // name=path
};

void addStageRunCommand(CLI::App& app, StageRunOptions& options);
int runStageRunCommand(const StageRunOptions& options, std::ostream& out);

}  // namespace vigil
