#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string_view>

#include "daemon/base/error.h"
#include "daemon/base/figures.h"
#include "daemon/base/log.h"

namespace vigil {

// What the inference worker's detections came to: the successful ones, the failures (the
// invalid outputs among them), the time spent in the detector; and a failure's log line, one per
// 10 s at most (a broken backend must not flood the journal), saying how many it passed over.
// Threads: the worker's thread counts and logs; any thread reads.
class InferenceCounters {
 public:
  // Time spent in the detector, failures included.
  void busy(std::chrono::steady_clock::duration spent) {
    busyNanos_.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(spent).count(),
                         std::memory_order_relaxed);
  }
  void succeeded() { inferences_.fetch_add(1, std::memory_order_relaxed); }
  // A detection of `camera`'s frame at `at` failed with `error`: counted, and logged unless one
  // was less than 10 s before.
  void failed(const Error& error, std::string_view camera,
              std::chrono::steady_clock::time_point at);

  std::uint64_t failures() const { return failures_.load(); }
  std::uint64_t inferences() const { return inferences_.load(); }  // successful detections
  // Failures whose output was checked and rejected (NaN/Inf, wrong shape): the backend ran
  // but produced garbage. A subset of failures().
  std::uint64_t invalidOutputs() const { return invalidOutputs_.load(); }
  // Seconds spent in the detector so far, failures included (DetectorLoad, the metric).
  double busySeconds() const {
    return std::chrono::duration<double>(std::chrono::nanoseconds(busyNanos_.load())).count();
  }
  // Its figures for /metrics (vigil_detection_failures_total, vigil_detector_busy_seconds_total,
  // vigil_invalid_outputs_total), each named once in inference_counters.cpp. Any thread.
  void report(FigureWriter& out) const;

 private:
  std::atomic<std::uint64_t> failures_{0};
  std::atomic<std::uint64_t> inferences_{0};
  std::atomic<std::uint64_t> invalidOutputs_{0};
  std::atomic<std::int64_t> busyNanos_{0};
  // The failure log: the worker's thread only.
  std::shared_ptr<spdlog::logger> log_ = logger("detector");
  std::chrono::steady_clock::time_point lastLogged_{};
  std::uint64_t suppressed_ = 0;
};

}  // namespace vigil
