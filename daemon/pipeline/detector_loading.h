#pragma once

#include <memory>
#include <string>

#include "daemon/settings/settings.h"
#include "detector/detector.h"

namespace vigil {

struct LoadedDetector {
  std::unique_ptr<Detector> detector;
  // Why the backend in use is the one in use, for the log, vigil_backend_info and /api/status.
  std::string reason;
};

// Loads the configured model on the configured backend and logs what it got: at info, and at
// warn when the backend is not the one configured (no NPU runtime in this build, `auto` fell
// back). `npu` in a build without an NPU runtime runs the CPU reference and says so.
Expected<LoadedDetector> loadDetector(const DetectorConfig& config);

// Whether two detector sections load the same detector: min_score matters to it only up to
// tracking's low score (it is given the lower of the two; above that the result path filters).
bool loadsTheSameDetector(const DetectorConfig& a, const DetectorConfig& b);

// Whether the section's detector may hold an NPU session (one per process: RyzenAI-SW#402):
// `npu`, or `auto` on a bundle with an NPU stage, in a build with an NPU runtime. Reads the
// bundle's manifest for `auto`: not on the control thread.
bool mayHoldAnNpuSession(const DetectorConfig& config);

}  // namespace vigil
