#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace vigil {

struct RunOptions {
  std::filesystem::path configPath = "/etc/vigil/cameras.yaml";
  std::optional<double> durationSeconds;  // stop by itself after this long (tests, benchmarks)
  std::filesystem::path summaryJson;      // write per-camera figures here at the end
  std::filesystem::path tracksOut;        // record every tracked frame here (TrackRecorder)
  // Where the line counts are kept across restarts (line-counts.json); empty: $STATE_DIRECTORY
  // (systemd's StateDirectory=), else they are not kept.
  std::filesystem::path stateDir;
  // --log-level: trace, debug, info, warn or error, over the file's log.level (and kept across
  // reloads); empty: the file's.
  std::string logLevel;
};

// `vigil run`: the always-on daemon. Loads the configuration, starts one capture thread per
// enabled camera and one inference worker, and runs the io_context that handles signals
// (SIGINT/SIGTERM stop, SIGHUP reloads), timers and results. docs/architecture.md draws the
// parts and walks one frame through them.
// Returns 0 after a clean stop, 1 when the configuration or the model cannot be used.
int runDaemon(const RunOptions& options);

}  // namespace vigil
