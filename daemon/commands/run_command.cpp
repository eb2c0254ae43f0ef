#include "daemon/commands/run_command.h"

#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <iterator>
#include <ostream>
#include <regex>
#include <string>
#include <vector>

#include "daemon/base/log.h"
#include "daemon/base/model_location.h"
#include "daemon/base/url_credentials.h"
#include "daemon/config/config_file.h"
#include "daemon/web/web_security.h"
#include "detector/backend.h"
#include "detector/model_manifest.h"

namespace vigil {

namespace {

std::string mqttLine(const MqttConfig& m) {
  if (!m.enabled) return "mqtt: off (no mqtt section)\n";
  return fmt::format("mqtt: {}{}, QoS {}, Home Assistant discovery {}, snapshots {}\n", m.url,
                     m.username.empty() ? "" : " as user " + m.username, m.qos,
                     m.haDiscovery ? "under " + m.haPrefix + "/" : "off",
                     m.snapshots ? "on" : "off");
}

std::string httpLine(const HttpConfig& h) { return describeHttpAccess(h) + "\n"; }

// The camera's line and, indented under it, what changes what it reports.
std::string cameraLines(const CameraConfig& c) {
  // Size, rate and pixel format are asked of V4L2 devices only; the others deliver their own.
  const std::string capture =
      c.kind == SourceKind::kV4l2
          ? fmt::format("{}x{} @ {}, format {}, ", c.width, c.height,
                        c.fpsSet ? fmt::format("{} fps", c.fps)
                                 : std::string("the lowest fps offered at or above detect_fps"),
                        pixelFormatName(c.format))
          : std::string();
  const std::string tracking =
      c.tracking.enabled ? fmt::format(", tracking (lost after {} s)",
                                       std::chrono::duration<double>(c.tracking.lostAfter).count())
                         : ", tracking off";
  std::string out =
      fmt::format("  {:<16} {:<5} {}  {}detect {} fps{}{}{}\n", c.name, sourceKindName(c.kind),
                  redactCredentials(c.location), capture, c.detectFps, tracking,
                  c.loop ? ", loop" : "", c.enabled ? "" : ", DISABLED");
  const std::vector<std::string> zones = zoneNames(c);
  if (!zones.empty()) out += fmt::format("    zones: {}\n", fmt::join(zones, ", "));
  for (const LineSpec& l : c.lines) {
    out += fmt::format("    line {}: {} points, in: {}, out: {}, band {} px, min_frames {}\n",
                       l.name, l.points.size(), l.inName, l.outName, l.band, l.minFrames);
  }
  if (!c.masks.empty()) {
    out += fmt::format("    masks: {} (persons standing in them are ignored)\n", c.masks.size());
  }
  if (c.motion.enabled) {
    out += fmt::format("    motion gating: on (idle after {} s: one detection every {} s)\n",
                       std::chrono::duration<double>(c.motion.idleAfter).count(),
                       std::chrono::duration<double>(c.motion.idleDetectInterval).count());
  }
  return out;
}

}  // namespace

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
  cmd->add_option("--state-dir", options.stateDir,
                  "Keep the line counts across restarts in DIR/line-counts.json (default: "
                  "$STATE_DIRECTORY, which systemd sets); made when it does not exist");
  cmd->add_option("--log-level", options.logLevel,
                  "Log from this level up, over the configuration's log.level (default: its "
                  "value, info without it)")
      ->check(CLI::IsMember(
          std::vector<std::string>(std::begin(kLogLevelNames), std::end(kLogLevelNames))));
}

void addCheckConfigCommand(CLI::App& app, CheckConfigOptions& options) {
  CLI::App* cmd = app.add_subcommand("check-config", "Validate a cameras.yaml and summarise it");
  cmd->add_option("file", options.file, "Configuration file")->required();
}

int runCheckConfigCommand(const CheckConfigOptions& options, std::ostream& out) {
  // Mistakes as a compiler says them, `file:line:col: ...` at the start of the line (an editor
  // jumps there), without the log's time and level.
  auto config = loadConfig(options.file);
  if (!config) {
    std::cerr << safeToShow(config.error().message) << "\n";
    return 1;
  }
  // "web.yml:3:12: warning: tls_server_config.key_file: ...", as a compiler's warning.
  static const std::regex kAt(R"(^([^\n]*?:[0-9]+:[0-9]+): )");
  for (const std::string& warning : config->warnings) {
    const std::string text = safeToShow(warning);
    std::cerr << (std::regex_search(text, kAt)
                      ? std::regex_replace(text, kAt,
                                           "$1: warning: ", std::regex_constants::format_first_only)
                      : "warning: " + text)
              << "\n";
  }
  std::filesystem::path model = config->detector.model.empty()
                                    ? builtInModelDir()
                                    : std::filesystem::path(config->detector.model);
  auto manifest = loadModelManifest(model);
  if (!manifest) {
    std::cerr << safeToShow(
                     fmt::format("{}: detector.model: {}", options.file, manifest.error().message))
              << "\n";
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
  out << mqttLine(config->mqtt) << httpLine(config->http);
  out << fmt::format("{} camera(s):\n", config->cameras.size());
  for (const CameraConfig& c : config->cameras) out << cameraLines(c);
  return 0;
}

}  // namespace vigil
