#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <string>
#include <vector>

#include "daemon/commands/detector_cli.h"

namespace vigil {

struct BenchCommandOptions {
  DetectorCliOptions detector;
  std::vector<std::string> paths;
  int warmup = 5;
  int iterations = 20;
  bool json = false;
};

void addBenchCommand(CLI::App& app, BenchCommandOptions& options);

// Times preprocess, inference and postprocess per frame on real images (cycled through), after
// warm-up runs that are not counted. Prints median, p95, min and max of each stage, the share
// of pre+postprocessing relative to inference and the process CPU time per frame (all threads,
// CLOCK_PROCESS_CPUTIME_ID). `detector.backend` may list several backends ("cpu,cpu-ort"):
// they run in alternation, frame by frame, in this one process, so the machine's load hits
// them alike; each is then compared with the first by the median of per-round ratios.
// Returns 0, or 2 on any failure.
int runBenchCommand(const BenchCommandOptions& options, std::ostream& out);

struct Summary {
  double median = 0;
  double p95 = 0;
  double min = 0;
  double max = 0;
};

// "cpu,cpu-ort" -> {"cpu", "cpu-ort"}.
std::vector<std::string> splitBackends(const std::string& list);

// Median (mean of the middle two for an even count) and nearest-rank p95 of `values`.
Summary summarize(std::vector<double> values);

}  // namespace vigil
