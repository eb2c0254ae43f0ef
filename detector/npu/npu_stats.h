#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string_view>

namespace vigil {

// Why `auto` left the NPU for the CPU; the label values of vigil_backend_fallback_total.
enum class FallbackReason : std::size_t {
  kNpuUnavailable,  // no device, no permission, no XRT, design not loadable
  kCanaryFailed,    // the canary's output differs from the bundle's and the CPU's
  kInvalidOutput,   // NaN/Inf in a frame's output
  kRunFailed,       // run errors survived the whole recovery ladder
  kNotOnNpu,        // the runtime placed the work on the CPU (operator report, busy time)
  kTimeout,         // runs passed timeout_ms (cut, not waited for) up the whole ladder
  kCount,
};
std::string_view fallbackReasonName(FallbackReason reason);

// Counters of the NPU path, process-wide: the daemon's metrics read them, the inference worker
// bumps them (relaxed atomics only, the hot path never locks).
struct NpuStats {
  std::atomic<std::uint64_t> runs{0};
  std::atomic<std::uint64_t> runErrors{0};
  std::atomic<std::uint64_t> timeouts{0};
  std::atomic<std::uint64_t> retries{0};
  std::atomic<std::uint64_t> contextRecreations{0};
  std::atomic<std::uint64_t> deviceReopens{0};
  std::atomic<std::uint64_t> invalidOutputs{0};
  std::atomic<std::uint64_t> canaryRuns{0};
  std::atomic<std::uint64_t> canaryFailures{0};
  std::array<std::atomic<std::uint64_t>, static_cast<std::size_t>(FallbackReason::kCount)>
      fallbacks{};
  // What `auto` answers with now: true from the NPU's successful start-up or retry until it
  // falls back, false from then on (the daemon's vigil_backend_info, status API and MQTT
  // attributes follow it).
  // With BackendOptions::compareWithReference: outputs compared with the CPU reference of the
  // same stage, and the largest max abs difference seen (vigil bench resets it).
  std::atomic<std::uint64_t> referenceComparisons{0};
  std::atomic<double> referenceMaxAbsDiff{0.0};
  std::atomic<bool> npuActive{false};
  // The Vitis AI EP's placement of the NPU stage's graph nodes (its operator report), -1 until
  // a vitisai session reported it.
  std::atomic<std::int64_t> graphNodesNpu{-1};
  std::atomic<std::int64_t> graphNodesCpu{-1};
  // The last fallback's reason (a FallbackReason); kCount until the first fallback.
  std::atomic<std::size_t> lastFallback{static_cast<std::size_t>(FallbackReason::kCount)};

  void countFallback(FallbackReason r) {
    fallbacks[static_cast<std::size_t>(r)].fetch_add(1, std::memory_order_relaxed);
    lastFallback.store(static_cast<std::size_t>(r), std::memory_order_relaxed);
  }
  void recordReferenceDiff(double diff) {
    referenceComparisons.fetch_add(1, std::memory_order_relaxed);
    double seen = referenceMaxAbsDiff.load(std::memory_order_relaxed);
    while (diff > seen &&
           !referenceMaxAbsDiff.compare_exchange_weak(seen, diff, std::memory_order_relaxed)) {
    }
  }
  // nullopt before the first fallback.
  std::optional<FallbackReason> lastFallbackReason() const {
    std::size_t r = lastFallback.load(std::memory_order_relaxed);
    if (r >= static_cast<std::size_t>(FallbackReason::kCount)) return std::nullopt;
    return static_cast<FallbackReason>(r);
  }
  std::uint64_t fallbackCount(FallbackReason r) const {
    return fallbacks[static_cast<std::size_t>(r)].load(std::memory_order_relaxed);
  }
};

NpuStats& npuStats();

}  // namespace vigil
