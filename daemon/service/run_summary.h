#pragma once

#include <filesystem>
#include <optional>

#include "daemon/events/result_path.h"
#include "daemon/status/status_snapshot.h"

namespace vigil {

// What `vigil run` says when it stops: one log line per camera, and with --summary-json a
// document of per-camera figures that tests and benchmarks read.
struct RunTotals {
  double seconds = 0;     // from the start of the cameras to the stop
  double cpuSeconds = 0;  // the process's CPU time over the same span
};

// Logs each camera's line; with `summaryJson` set, writes the document there (an error is
// logged, the stop goes on).
void writeRunSummary(const std::filesystem::path& summaryJson, const DaemonSnapshot& snapshot,
                     const ResultPath& results, const RunTotals& totals);

// The summary is written at the stop; a run of hours must not find out only then that it
// cannot be. Creates the file (empty) if it does not exist, as the stop would. Logs why not.
bool summaryIsWritable(const std::filesystem::path& summaryJson);

}  // namespace vigil
