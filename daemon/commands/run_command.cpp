#include "daemon/commands/run_command.h"

#include <fmt/format.h>

#include <ostream>

#include "daemon/config.h"
#include "daemon/log.h"
#include "daemon/model_location.h"
#include "daemon/url_credentials.h"
#include "detector/backend.h"
#include "detector/model_manifest.h"

namespace vigil {

void addRunCommand(CLI::App& app, RunOptions& options) {
  CLI::App* cmd = app.add_subcommand("run", "Run the daemon: capture, detect, publish");
  cmd->add_option("-c,--config", options.configPath, "Configuration file")->capture_default_str();
  cmd->add_option("--duration", options.durationSeconds, "Stop by itself after SECONDS")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--summary-json", options.summaryJson,
                  "At the end, write per-camera counters and latencies to FILE");
  cmd->add_option("--tracks-out", options.tracksOut,
                  "Record every tracked frame in DIR/<camera>.txt (MOTChallenge, for vigil "
                  "eval-tracks)")
      ->check(CLI::ExistingDirectory);
}

void addCheckConfigCommand(CLI::App& app, CheckConfigOptions& options) {
  CLI::App* cmd = app.add_subcommand("check-config", "Validate a cameras.yaml and summarise it");
  cmd->add_option("file", options.file, "Configuration file")->required();
}

int runCheckConfigCommand(const CheckConfigOptions& options, std::ostream& out) {
  auto log = logger("config");
  auto config = loadConfig(options.file);
  if (!config) {
    log->error("{}", config.error().message);
    return 1;
  }
  for (const std::string& warning : config->warnings) log->warn("{}", warning);
  std::filesystem::path model = config->detector.model.empty()
                                    ? builtInModelDir()
                                    : std::filesystem::path(config->detector.model);
  auto manifest = loadModelManifest(model);
  if (!manifest) {
    log->error("{}: detector.model: {}", options.file, manifest.error().message);
    return 1;
  }
  const DetectorConfig& d = config->detector;
  out << fmt::format("{}: valid (version {})\n", options.file, config->version);
  out << fmt::format("node: {}{}\n", config->node,
                     config->mqtt.enabled
                         ? fmt::format(" (MQTT client id {}, topics under {}/)",
                                       config->mqtt.clientId, config->mqtt.topicPrefix)
                         : std::string());
  out << fmt::format(
      "detector: model {} ({}), backend {}, {}, min score {}, NMS IoU {}, classes {}\n",
      manifest->name, model.string(),
      d.backend == "auto" ? fmt::format("auto (here: {})", autoBackendOrder(*manifest)) : d.backend,
      d.threads == 0 ? std::string("every hardware thread")
                     : fmt::format("{} CPU thread{}", d.threads, d.threads == 1 ? "" : "s"),
      d.minScore, d.nms, fmt::join(d.classes, ","));
  out << fmt::format("{} camera(s):\n", config->cameras.size());
  for (const CameraConfig& c : config->cameras) {
    const std::string tracking =
        c.tracking.enabled
            ? fmt::format(", tracking (lost after {} s)",
                          std::chrono::duration<double>(c.tracking.lostAfter).count())
            : ", tracking off";
    out << fmt::format("  {:<16} {:<5} {}  {}x{} @ {} fps, detect {} fps, format {}{}{}{}\n",
                       c.name, sourceKindName(c.kind), redactCredentials(c.location), c.width,
                       c.height, c.fps, c.detectFps, pixelFormatName(c.format), tracking,
                       c.loop ? ", loop" : "", c.enabled ? "" : ", DISABLED");
  }
  return 0;
}

}  // namespace vigil
