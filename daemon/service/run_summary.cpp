#include "daemon/service/run_summary.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "daemon/base/log.h"
#include "daemon/status/status_api.h"

namespace vigil {

namespace {

void logCamera(const CameraSnapshot& c, double seconds) {
  const auto n = [&c](std::string_view key) { return c.frames.countOf(key).value_or(0); };
  logger("daemon")->info(
      "[cam={}] {} captured, {} detected ({:.2f}/s), {} skipped, {} dropped, {} gated, {} "
      "decoded, {} decode errors, {} lost, {} reconnects, capture CPU {:.1f} s, latency p50 "
      "{:.0f} ms p99 {:.0f} ms",
      c.name, n("captured"), n("detected"),
      seconds > 0 ? static_cast<double>(n("detected")) / seconds : 0.0, n("skipped"), n("dropped"),
      n("gated"), n("decoded"), n("decode_errors"), n("lost"), n("reconnects"), c.captureCpuSeconds,
      c.latencyMs.p50, c.latencyMs.p99);
}

nlohmann::json cameraSummary(const CameraSnapshot& c, const CameraView* view) {
  nlohmann::json events = nlohmann::json::array();
  if (view != nullptr) {
    for (const PersonEventStart& e : view->events) {
      events.push_back({{"start", isoUtc(e.start)}, {"start_frame", e.sequence}});
    }
  }
  nlohmann::json entry = figuresJson(c.frames);
  entry.update(
      {{"gated_detector_seconds_estimate", c.gatedSeconds},
       {"capture_cpu_seconds", c.captureCpuSeconds},
       {"regions", regionsJson(c.regions)},
       {"state", c.state},
       {"latency_ms",
        {{"p50", c.latencyMs.p50}, {"p99", c.latencyMs.p99}, {"samples", c.latencyMs.samples}}},
       {"person_events", events}});
  return entry;
}

}  // namespace

void writeRunSummary(const std::filesystem::path& summaryJson, const DaemonSnapshot& snapshot,
                     const ResultPath& results, const RunTotals& totals) {
  nlohmann::json cameras = nlohmann::json::object();
  for (const CameraSnapshot& c : snapshot.cameras) {
    logCamera(c, totals.seconds);
    cameras[c.name] = cameraSummary(c, results.view(c.name));
  }
  if (summaryJson.empty()) return;
  nlohmann::json summary = {{"seconds", totals.seconds},
                            {"cpu_seconds", totals.cpuSeconds},
                            {"detection_failures", snapshot.detectionFailures},
                            {"events_published", snapshot.eventsPublished},
                            {"cameras", cameras}};
  if (snapshot.mqtt) {
    summary["mqtt"] = {{"published", snapshot.mqtt->published},
                       {"dropped", snapshot.mqtt->dropped},
                       {"buffered", snapshot.mqtt->buffered},
                       {"reconnects", snapshot.mqtt->reconnects}};
  }
  std::ofstream out(summaryJson);
  out << summary.dump(2) << '\n';
  if (!out) {
    logger("daemon")->error("--summary-json {}: cannot write the summary: {}", summaryJson.string(),
                            std::strerror(errno));
  }
}

bool summaryIsWritable(const std::filesystem::path& summaryJson) {
  if (summaryJson.empty()) return true;
  const int fd = ::open(summaryJson.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    logger("daemon")->error("--summary-json {}: cannot write there: {}", summaryJson.string(),
                            std::strerror(errno));
    return false;
  }
  ::close(fd);
  return true;
}

}  // namespace vigil
