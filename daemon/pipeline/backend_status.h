#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "daemon/base/metrics.h"
#include "detector/backend.h"
#include "detector/npu/npu_backend.h"

namespace vigil {

// The backend in use as the daemon reports it: vigil_backend_info{backend,device,reason},
// vigil_backend_fallback_total{reason} (one series per FallbackReason),
// vigil_npu_graph_nodes{device} (the Vitis AI EP's placement), the "backend" object
// of /api/status and the MQTT status attributes.
//
// For `auto` on an NPU bundle the backend in use changes while the daemon runs: the NPU falls
// back to the CPU and comes back after a successful retry. The inference worker only bumps
// npuStats()'s relaxed atomics; poll() reads them on the control thread and says when the
// backend in use changed, so the hot path never locks or allocates for this.
//
// Threads: the control (io_context) thread calls everything; the metric callbacks read atomics.
class BackendStatus {
 public:
  struct InUse {
    std::string name;    // the backend answering now: "npu", "cpu-ort", "cpu"
    std::string device;  // what runs it
    std::string reason;  // why this one: "configured: cpu", "auto: ...", ...
    std::optional<FallbackReason> lastFallback;  // the last NPU -> CPU fallback, if any

    bool operator==(const InUse&) const = default;
  };

  // Registers both metric families in `registry` (the fallback counters at 0 until the first
  // fallback, so alerts can be written for any build). `stats` outlives this.
  explicit BackendStatus(Registry& registry, const NpuStats& stats = npuStats());

  // A new detector (start-up, reload), before its worker runs: `configured` is the config's
  // backend key, `reason` why `backend` is the one in use.
  void reset(const std::string& configured, const InferenceBackend& backend, std::string reason);
  // What reset() keeps of a backend, read on the thread that holds it (a reload's loader
  // thread, before the worker has it), applied later on the control thread.
  struct Facts {
    std::string configured;
    std::string reason;
    std::string name;
    std::string device;
    std::optional<AutoBackendSides> sides;
  };
  static Facts factsOf(const std::string& configured, const InferenceBackend& backend,
                       std::string reason);
  void reset(Facts facts);

  // Reads the atomics; true when the backend in use or the last fallback reason changed since
  // the last call (vigil_backend_info already follows).
  bool poll();

  const InUse& inUse() const { return inUse_; }
  // {"name", "device", "reason", "configured", "last_fallback_reason" (null: none),
  // "npu_graph_nodes" ({"npu", "cpu"} from the Vitis AI EP's report; null: none)}: the status
  // API's "backend" object and the MQTT status attributes.
  nlohmann::json json() const;

 private:
  InUse current() const;
  nlohmann::json graphNodesJson() const;
  void publishInfo();

  const NpuStats& stats_;
  GaugeFamily& info_;
  std::string configured_;
  std::string reason_;  // for a backend that does not switch
  std::string name_;
  std::string device_;
  std::optional<AutoBackendSides> sides_;  // set for `auto` on an NPU bundle
  InUse inUse_;
  LabelValues infoLabels_;
};

}  // namespace vigil
