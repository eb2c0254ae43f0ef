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
  int iterations = 20;          // measured batches per batch size and backend
  std::vector<int> batches{1};  // frames per batch, submitted back to back
  // Milliseconds of rest after each batch, outside the timing: a camera's cadence (200 at 5
  // detections a second), whose pauses the caches and the CPU cool in, as in the daemon.
  int paceMs = 0;
  bool json = false;
};

void addBenchCommand(CLI::App& app, BenchCommandOptions& options);

// Times preprocess, inference and postprocess per frame on real images (cycled through), after
// warm-up batches that are not counted, for each batch size (a batch: N frames submitted back
// to back, figures per frame). Prints median, p95, min and max of each stage, the share of
// pre+postprocessing relative to inference, the process CPU time per frame (all threads,
// CLOCK_PROCESS_CPUTIME_ID) and the CPU utilisation while the backend ran (process CPU seconds
// over wall seconds). `detector.backend` may list several backends ("cpu,npu"): they run in
// alternation, batch by batch, in this one process, so the machine's load hits them alike;
// each is then compared with the first by the median of per-round ratios. A backend with an
// NPU stage has every output checked finite and compared with the CPU reference of the same
// stage (max abs diff reported); under XRT's noop shim the report says its times are not NPU
// speed. Returns 0, or 2 on any failure.
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
