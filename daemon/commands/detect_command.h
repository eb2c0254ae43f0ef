#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <string>
#include <vector>

#include "daemon/commands/detector_cli.h"

namespace vigil {

struct DetectCommandOptions {
  DetectorCliOptions detector;
  std::vector<std::string> paths;
  std::string annotateDir;
  bool json = false;
  // --regions auto|on|off: a video's frames detected on regions around motion and the last
  // frame's persons, as the daemon's camera without tracking (video_regions.h).
  std::string regions = "auto";
};

void addDetectCommand(CLI::App& app, DetectCommandOptions& options);

// Runs the detector on every image and video frame of the paths. Prints a JSON object per
// image or frame with --json (one per line), a readable line otherwise, to `out`. Bad inputs
// get one error line each and the rest are still processed. Returns 0 when every input was
// processed, 2 otherwise (also when the model or backend cannot be loaded).
int runDetectCommand(const DetectCommandOptions& options, std::ostream& out);

}  // namespace vigil
