#include "daemon/pipeline/detector_loading.h"

#include <algorithm>

#include "daemon/base/log.h"
#include "daemon/base/model_location.h"
#include "detector/model_manifest.h"

namespace vigil {

namespace {

// The backend table has "npu" when this build has an NPU runtime (XRT or the Vitis AI EP).
bool hasNpuBackend() {
  for (const BackendEntry& e : backendTable()) {
    if (e.name == "npu") return true;
  }
  return false;
}

std::string backendReason(const DetectorConfig& c, const Detector& d) {
  if (c.backend == "cpu" || c.backend == "cpu-ort") return "configured: " + c.backend;
  if (c.backend == "auto") {
    return d.autoFallback().empty() ? "auto: the preferred backend of this build"
                                    : "auto: " + d.autoFallback();
  }
  if (hasNpuBackend()) return "configured: " + c.backend;
  // Built without any NPU runtime: npu runs the CPU reference, and says so.
  return "configured: " + c.backend + "; no NPU backend in this build, running the CPU reference";
}

DetectorOptions detectorOptions(const DetectorConfig& c) {
  DetectorOptions o;
  o.model = c.model.empty() ? builtInModelDir() : std::filesystem::path(c.model);
  // cpu, cpu-ort and auto run as configured; npu only where this build has it (see
  // backendReason).
  o.backend = c.backend == "npu" && !hasNpuBackend() ? "cpu" : c.backend;
  o.threads = c.threads;
  // Tracking's second association needs the low-score persons; the result path drops what is
  // below c.minScore from everything else (ResultPath::reportedScore).
  o.minScore = std::min(c.minScore, kTrackingLowScore);
  o.nmsIou = c.nms;
  o.classes = c.classes;
  o.fitInput = !c.squareInput;
  o.vitisai = c.vitisai;
  return o;
}

}  // namespace

bool loadsTheSameDetector(const DetectorConfig& a, const DetectorConfig& b) {
  DetectorConfig left = a;
  DetectorConfig right = b;
  left.minScore = std::min(a.minScore, kTrackingLowScore);
  right.minScore = std::min(b.minScore, kTrackingLowScore);
  return left == right;
}

bool mayHoldAnNpuSession(const DetectorConfig& config) {
  if (!hasNpuBackend()) return false;
  if (config.backend == "npu") return true;
  if (config.backend != "auto") return false;
  auto manifest = loadModelManifest(detectorOptions(config).model);
  return manifest && manifest->npuStage() != nullptr;
}

Expected<LoadedDetector> loadDetector(const DetectorConfig& config) {
  auto detector = Detector::create(detectorOptions(config));
  if (!detector) return tl::unexpected(detector.error());
  auto log = logger("daemon");
  const Detector& d = **detector;
  log->info(
      "detector: model {} on backend '{}' ({}), input {}, min score {} (persons from {} for "
      "tracking), NMS IoU {}",
      d.manifest().name, d.backend().name(), d.backend().device(), d.inputDescription(),
      config.minScore, d.minScore(), d.nmsIou());
  if (!d.fitRefused().empty()) {
    log->warn("detector: the model's input.any_size is not taken, every input is {}: {}",
              d.inputDescription(), d.fitRefused());
  }
  LoadedDetector out{std::move(*detector), backendReason(config, d)};
  const bool substituted = config.backend != d.backend().name() && config.backend != "auto";
  if (substituted || !d.autoFallback().empty()) log->warn("detector: {}", out.reason);
  return out;
}

}  // namespace vigil
