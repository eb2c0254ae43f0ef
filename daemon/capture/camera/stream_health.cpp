#include "daemon/capture/camera/stream_health.h"

#include <fmt/format.h>

#include "daemon/base/log.h"
#include "daemon/base/url_credentials.h"
#include "daemon/capture/picture/thread_cpu.h"

namespace vigil {

StreamHealth::StreamHealth(std::string camera, CameraCounters& counters)
    : camera_(std::move(camera)), counters_(counters), cpuCharged_(threadCpuNanos()) {
  counters_.decoding->setCamera(camera_);  // its pictures' decoders log with the camera's name
}

void StreamHealth::chargeCpu() {
  const std::int64_t now = threadCpuNanos();
  counters_.captureThreadCpuNanos.fetch_add(now - cpuCharged_, std::memory_order_relaxed);
  cpuCharged_ = now;
}

void StreamHealth::countLost(const FrameSource& source) {
  const std::uint64_t lost = source.framesLost();
  if (lost > lostCounted_) {
    counters_.lost.fetch_add(lost - lostCounted_, std::memory_order_relaxed);
  }
  lostCounted_ = lost;
}

void StreamHealth::badFrame(const std::string& why) {
  // A warning when a run of corrupt frames starts, at most once a minute (the count is in
  // vigil_camera_decode_errors_total); the runs in between at debug.
  constexpr std::chrono::seconds kBadWarningEvery{60};
  counters_.decodeErrors.fetch_add(1, std::memory_order_relaxed);
  lastBadFrame_ = redactCredentials(why);
  if (badFrames_++ > 0) return;
  const auto now = std::chrono::steady_clock::now();
  badRunWarned_ = lastBadWarning_ == std::chrono::steady_clock::time_point{} ||
                  now - lastBadWarning_ >= kBadWarningEvery;
  if (badRunWarned_) lastBadWarning_ = now;
  logger("capture")->log(badRunWarned_ ? spdlog::level::warn : spdlog::level::debug,
                         "[cam={}] corrupt frames: {}", camera_, lastBadFrame_);
}

void StreamHealth::usableFrame() {
  if (badFrames_ == 0) return;
  logger("capture")->log(badRunWarned_ ? spdlog::level::info : spdlog::level::debug,
                         "[cam={}] frames usable again after {} corrupt", camera_, badFrames_);
  badFrames_ = 0;
  lastBadFrame_.clear();
}

void StreamHealth::newSession() { counters_.decoding->startOver(); }

std::optional<std::string> StreamHealth::decodedUnusable(std::chrono::milliseconds stall) const {
  if (!counters_.decoding->corruptFor(stall)) return std::nullopt;
  return fmt::format("no usable picture for {} ms: every one decoded was corrupt (the last: {})",
                     stall.count(), redactCredentials(counters_.decoding->lastRefusal()));
}

std::string StreamHealth::decoderName(const SourceInfo& info, HwAccel asked) {
  std::string decoder = info.decoder;
  if (info.hwFallback.empty()) return decoder;
  decoder += fmt::format(" (hwaccel {}: {})", hwAccelName(asked), info.hwFallback);
  if (info.hwFallback != hwFallbackLogged_) {
    logger("capture")->warn("[cam={}] hwaccel {} not used: {}; decoding in software", camera_,
                            hwAccelName(asked), info.hwFallback);
    hwFallbackLogged_ = info.hwFallback;
  }
  return decoder;
}

}  // namespace vigil
