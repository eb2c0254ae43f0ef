#include "daemon/capture/picture/decode_account.h"

#include "daemon/base/log.h"

namespace vigil {

namespace {

std::int64_t nowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void DecodeAccount::setCamera(std::string camera) {
  std::lock_guard lock(mutex_);
  camera_ = std::move(camera);
}

void DecodeAccount::report(const JpegMessages* messages, const Error* refused) {
  if (messages != nullptr && messages->saidAny()) {
    for (std::size_t k = 0; k < kJpegMessageKinds; ++k) {
      if (!messages->said[k]) continue;
      messages_[k].fetch_add(1, std::memory_order_relaxed);
      log(static_cast<JpegMessageKind>(k), messages->text[k].data());
    }
  }
  if (refused == nullptr) {
    corruptSince_.store(0, std::memory_order_relaxed);
    return;
  }
  corrupt_.fetch_add(1, std::memory_order_relaxed);
  const std::int64_t now = nowNanos();
  std::int64_t none = 0;
  corruptSince_.compare_exchange_strong(none, now, std::memory_order_relaxed);
  corruptLatest_.store(now, std::memory_order_relaxed);
  std::lock_guard lock(mutex_);
  lastRefusal_ = refused->message;
}

void DecodeAccount::log(JpegMessageKind kind, std::string_view text) {
  const auto k = static_cast<std::size_t>(kind);
  std::lock_guard lock(mutex_);
  if (!logLimit_.due(std::string(jpegMessageKindName(kind)), Clock::now())) {
    ++unlogged_[k];
    return;
  }
  const std::string more =
      unlogged_[k] > 0 ? fmt::format("; {} more since the last report", unlogged_[k]) : "";
  unlogged_[k] = 0;
  // Damage at warn (the picture is not used); a harmless warning at info, once a minute.
  if (jpegMessageDamages(kind)) {
    logger("capture")->warn("[cam={}] JPEG decoder: {} ({}: the picture is not used{})", camera_,
                            text, jpegMessageKindName(kind), more);
  } else {
    logger("capture")->info("[cam={}] JPEG decoder: {} ({}: harmless, the picture is used{})",
                            camera_, text, jpegMessageKindName(kind), more);
  }
}

bool DecodeAccount::corruptFor(std::chrono::steady_clock::duration limit) const {
  const std::int64_t since = corruptSince_.load(std::memory_order_relaxed);
  if (since == 0) return false;
  const std::int64_t latest = corruptLatest_.load(std::memory_order_relaxed);
  return std::chrono::nanoseconds(latest - since) >= limit;
}

std::string DecodeAccount::lastRefusal() const {
  std::lock_guard lock(mutex_);
  return lastRefusal_;
}

void DecodeAccount::startOver() {
  corruptSince_.store(0, std::memory_order_relaxed);
  corruptLatest_.store(0, std::memory_order_relaxed);
}

}  // namespace vigil
