#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <string>

#include "daemon/commands/detector_cli.h"
#include "detector/coco_eval.h"

namespace vigil {

struct EvalCommandOptions {
  DetectorCliOptions detector;
  std::string images;
  std::string annotations;
  bool json = false;
  // Each JPEG decoded as the daemon decodes a camera's: at the smallest size covering the
  // detector's input (capture.scaled_decode), boxes in the full picture's pixels.
  bool scaledDecode = false;
};

void addEvalCommand(CLI::App& app, EvalCommandOptions& options);

// Runs the detector on every image of a COCO annotation file and prints person AP (IoU
// 0.50:0.95), AP50, AP75 and AR@100 by the pycocotools rules. Score threshold 0.01 and NMS IoU
// 0.65 unless given. With --json the last line is {"AP":..,"AP50":..,"AP75":..,"AR":..,
// "images":N,"positives":N}. Returns 0, or 2 when the model, the annotations or any image
// cannot be used (an image that fails is reported and counted, never silently skipped).
int runEvalCommand(const EvalCommandOptions& options, std::ostream& out);

}  // namespace vigil
