#pragma once

#include <optional>
#include <string_view>

namespace vigil {

// A camera's `regions:` section: whether its detections run on regions around motion and its
// tracked persons at the camera's own resolution (detector/regions.h) instead of the whole
// picture shrunk into the model's input.
struct RegionsConfig {
  enum class Mode {
    kAuto,  // on when the picture's longer side is at least twice the input's (regionsHelp)
    kOn,    // always (a 640x480 camera gains little: its persons are nearly at their own size)
    kOff,   // the whole picture shrunk, every detection, as without regions
  };
  Mode mode = Mode::kAuto;
  // Seconds between the whole-picture passes made besides the regions (0: every detection).
  double wholeEvery = 1.0;
  // Regions a detection runs at most (the re-detection of a person cut by a region's edge
  // apart); more are merged.
  int maxRegions = 3;

  bool operator==(const RegionsConfig&) const = default;
};

// "auto", "on", "off": the mode as cameras.yaml, the command line and /api/status write it.
std::string_view regionsModeName(RegionsConfig::Mode mode);
// The mode so named, or nullopt.
std::optional<RegionsConfig::Mode> regionsModeNamed(std::string_view name);

}  // namespace vigil
