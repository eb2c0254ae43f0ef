#include "daemon/pipeline/inference_counters.h"

#include <fmt/format.h>

#include <string>

namespace vigil {

void InferenceCounters::failed(const Error& error, std::string_view camera,
                               std::chrono::steady_clock::time_point at) {
  failures_.fetch_add(1, std::memory_order_relaxed);
  if (error.code == ErrorCode::kInvalidOutput) {
    invalidOutputs_.fetch_add(1, std::memory_order_relaxed);
  }
  if (at - lastLogged_ > std::chrono::seconds(10)) {
    log_->error("[cam={}] detection failed: {}{}", camera, error.message,
                suppressed_ > 0 ? fmt::format(" ({} more since the last report)", suppressed_)
                                : std::string());
    lastLogged_ = at;
    suppressed_ = 0;
  } else {
    ++suppressed_;
  }
}

namespace {

constexpr FigureName kFailures{
    "failures", "vigil_detection_failures_total",
    "Frames the detector failed on (runtime errors and invalid outputs)"};
constexpr FigureName kBusy{
    "busy_seconds", "vigil_detector_busy_seconds_total",
    "Seconds the shared detector spent detecting; its rate near 1 means the cameras wait for it "
    "(raise detector.threads)"};
constexpr FigureName kInvalidOutputs{
    "invalid_outputs", "vigil_invalid_outputs_total",
    "Inferences the runtime reported as successful whose output was NaN, Inf or malformed"};

}  // namespace

void InferenceCounters::report(FigureWriter& out) const {
  out.count(kFailures, {}, failures());
  out.total(kBusy, {}, busySeconds());
  out.count(kInvalidOutputs, {}, invalidOutputs());
}

}  // namespace vigil
