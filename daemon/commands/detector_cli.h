#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "detector/detector.h"

namespace vigil {

// The options every command that runs the detector shares: which model, which backend, how
// many threads, and the detection thresholds.
struct DetectorCliOptions {
  std::string model;
  std::string backend = "auto";  // as the daemon's detector.backend
  int threads = 1;               // as the daemon's detector.threads (bench/cpu-threads.md)
  std::optional<float> minScore;
  std::optional<float> nmsIou;
  std::string classes;  // comma-separated names
  bool allowUnverifiedModel = false;
  bool denoise = false;      // as a camera's denoise in the daemon
  bool squareInput = false;  // as the daemon's detector.square_input
  bool fileGraph = false;    // the model file's graph node for node (DetectorOptions::fuseStem)
  std::string onnxRuntime;   // the ONNX Runtime of the Vitis AI EP (config: detector.onnxruntime)
};

// `defaultMinScore`/`defaultNmsIou` override the manifest's defaults for this command (eval
// uses the COCO protocol's 0.01 / 0.65).
void addDetectorOptions(CLI::App& command, DetectorCliOptions& options);

DetectorOptions toDetectorOptions(const DetectorCliOptions& options);

// The model used when --model is not given: $VIGIL_MODEL, else the build's default directory.
std::string defaultModelPath();

// Creates the detector and logs what it runs on and whether the weights are verified.
Expected<std::unique_ptr<Detector>> createDetectorLogged(const DetectorOptions& options);

}  // namespace vigil
