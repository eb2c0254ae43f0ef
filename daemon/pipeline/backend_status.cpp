#include "daemon/pipeline/backend_status.h"

#include <fmt/format.h>

namespace vigil {

BackendStatus::BackendStatus(Registry& registry, const NpuStats& stats)
    : stats_(stats),
      info_(registry.gauge("vigil_backend_info",
                           "The inference backend in use now (value 1), its device and why; "
                           "changes when auto falls back from the NPU to the CPU and back",
                           {"backend", "device", "reason"})) {
  auto& fallbacks = registry.callbackCounter(
      "vigil_backend_fallback_total",
      "Times auto fell back from the NPU to the CPU, by reason: npu_unavailable (no device, "
      "permission, XRT, design), canary_failed, invalid_output (NaN/Inf), run_failed (errors "
      "or timeouts through the whole recovery ladder), not_on_npu (the runtime placed the work "
      "on the CPU: operator report, flat NPU busy time)",
      {"reason"});
  auto& nodes = registry.callbackGauge(
      "vigil_npu_graph_nodes",
      "Nodes of the NPU stage's graph by the device ONNX Runtime's Vitis AI EP placed them on "
      "(its operator report); absent until a vitisai session reported",
      {"device"});
  for (const char* device : {"npu", "cpu"}) {
    const std::atomic<std::int64_t>& count =
        std::string_view(device) == "npu" ? stats_.graphNodesNpu : stats_.graphNodesCpu;
    nodes.add({device}, [&count]() -> std::optional<double> {
      const std::int64_t n = count.load(std::memory_order_relaxed);
      if (n < 0) return std::nullopt;
      return static_cast<double>(n);
    });
  }
  for (std::size_t i = 0; i < static_cast<std::size_t>(FallbackReason::kCount); ++i) {
    const auto reason = static_cast<FallbackReason>(i);
    fallbacks.add({std::string(fallbackReasonName(reason))},
                  [&stats = stats_, reason]() -> std::optional<double> {
                    return static_cast<double>(stats.fallbackCount(reason));
                  });
  }
}

void BackendStatus::reset(const std::string& configured, const InferenceBackend& backend,
                          std::string reason) {
  reset(factsOf(configured, backend, std::move(reason)));
}

BackendStatus::Facts BackendStatus::factsOf(const std::string& configured,
                                            const InferenceBackend& backend, std::string reason) {
  return Facts{configured, std::move(reason), std::string(backend.name()), backend.device(),
               autoBackendSides(backend)};
}

void BackendStatus::reset(Facts facts) {
  configured_ = std::move(facts.configured);
  reason_ = std::move(facts.reason);
  name_ = std::move(facts.name);
  device_ = std::move(facts.device);
  sides_ = std::move(facts.sides);
  inUse_ = current();
  publishInfo();
}

BackendStatus::InUse BackendStatus::current() const {
  InUse u;
  u.lastFallback = stats_.lastFallbackReason();
  if (!sides_) {
    u.name = name_;
    u.device = device_;
    u.reason = reason_;
    return u;
  }
  if (stats_.npuActive.load(std::memory_order_relaxed)) {
    u.name = "npu";
    u.device = sides_->npuDevice;
    u.reason = "auto: the NPU passed its canary";
  } else {
    u.name = sides_->cpuName;
    u.device = sides_->cpuDevice;
    u.reason = fmt::format("auto: fell back from the NPU to the CPU ({}); the NPU is retried later",
                           u.lastFallback ? fallbackReasonName(*u.lastFallback) : "not started");
  }
  return u;
}

bool BackendStatus::poll() {
  InUse now = current();
  if (now == inUse_) return false;
  inUse_ = std::move(now);
  publishInfo();
  return true;
}

void BackendStatus::publishInfo() {
  info_.remove(infoLabels_);
  infoLabels_ = {inUse_.name, inUse_.device, inUse_.reason};
  info_.labels(infoLabels_)->set(1);
}

nlohmann::json BackendStatus::json() const {
  return {{"name", inUse_.name},
          {"device", inUse_.device},
          {"reason", inUse_.reason},
          {"configured", configured_},
          {"last_fallback_reason", inUse_.lastFallback
                                       ? nlohmann::json(fallbackReasonName(*inUse_.lastFallback))
                                       : nlohmann::json(nullptr)},
          {"npu_graph_nodes", graphNodesJson()}};
}

nlohmann::json BackendStatus::graphNodesJson() const {
  const std::int64_t npu = stats_.graphNodesNpu.load(std::memory_order_relaxed);
  const std::int64_t cpu = stats_.graphNodesCpu.load(std::memory_order_relaxed);
  if (npu < 0) return nullptr;
  return {{"npu", npu}, {"cpu", cpu}};
}

}  // namespace vigil
