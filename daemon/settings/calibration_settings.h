#pragma once

#include <filesystem>

namespace vigil {

// A camera's `calibration_samples` section: frames saved now and then for calibrating a
// quantized model on what this camera really sees (scripts/quantize-model.py --calibration DIR).
struct CalibrationSampleSettings {
  std::filesystem::path dir;  // empty: off (the default)
  double intervalS = 60;      // at most one frame per this many seconds
  int maxFrames = 200;        // per camera, counting frames already in the directory

  bool enabled() const { return !dir.empty(); }
  bool operator==(const CalibrationSampleSettings&) const = default;
};

}  // namespace vigil
