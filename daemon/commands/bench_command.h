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
// warm-up runs that are not counted. Prints median, p95, min and max of each stage and the
// share of pre+postprocessing relative to inference. Returns 0, or 2 on any failure.
int runBenchCommand(const BenchCommandOptions& options, std::ostream& out);

struct Summary {
  double median = 0;
  double p95 = 0;
  double min = 0;
  double max = 0;
};

// Median (mean of the middle two for an even count) and nearest-rank p95 of `values`.
Summary summarize(std::vector<double> values);

}  // namespace vigil
