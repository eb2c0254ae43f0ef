#include "daemon/capture/camera/stream_session.h"

#include <fmt/format.h>

#include <algorithm>

#include "daemon/base/log.h"

namespace vigil {

namespace {

constexpr std::chrono::milliseconds kReadTimeout{1000};

}  // namespace

std::uint64_t nextFrameId() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

StreamSession::StreamSession(SessionParts parts)
    : parts_(std::move(parts)),
      stallLimit_(std::max(parts_.stallTimeout,
                           std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::duration<double>(5.0 / parts_.config.fps)))) {}

StreamEnd StreamSession::run(FrameSource& source, const SourceInfo& info) {
  CameraCounters& counters = parts_.sink.counters();
  lastFrame_ = SteadyClock::now();
  parts_.health.newSession();
  while (!parts_.stopping) {
    counters.heartbeat.expectWithin(kReadTimeout + kHeartbeatGrace);
    // Every frame in use (the detector holds one, the slot another): this one is read into
    // scratch and dropped, its failures handled as any other read's.
    auto handle = parts_.pool.acquire();
    Frame& target = handle ? **handle : parts_.scratch;
    auto ok = source.read(target, kReadTimeout);
    parts_.health.countLost(source);
    parts_.health.chargeCpu();
    if (!ok) {
      if (auto end = readFailed(ok.error(), source)) return *end;
      continue;
    }
    frameRead(target, info);
    if (!handle) {
      counters.dropped.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    (*handle)->picture.billTo(counters.decoding);
    parts_.handOff(std::move(*handle), lastFrame_);
    followKeyframesOnly(source);
    if (auto lost = parts_.health.decodedUnusable(stallLimit_)) return {*lost, false};
  }
  return {};
}

void StreamSession::frameRead(Frame& frame, const SourceInfo& info) {
  CameraCounters& counters = parts_.sink.counters();
  frame.id = nextFrameId();
  lastFrame_ = SteadyClock::now();
  counters.captured.fetch_add(1, std::memory_order_relaxed);
  parts_.health.usableFrame();
  if (auto fps = rate_.frameAt(lastFrame_)) {
    logger("capture")->info("[cam={}] {}", parts_.config.name,
                            FrameRateProbe::describe(*fps, info.fps));
  }
  if (streamed_) return;
  counters.setDecoder(parts_.health.decoderName(info, parts_.config.hwDecode.accel));
  // The declared rate only as declared: FFmpeg's guess for an MJPEG stream is 25 whatever it
  // sends; the probe above says the real one.
  const std::string rate = info.fps > 0
                               ? fmt::format("at {:.1f} fps (declared by the source)", info.fps)
                               : std::string("rate not declared");
  parts_.status.set(CameraState::kStreaming,
                    fmt::format("{}x{} {}, {}, {}", info.width, info.height, info.pixelFormat,
                                info.description, rate));
  streamed_ = true;
}

std::optional<StreamEnd> StreamSession::readFailed(const Error& error, FrameSource& source) {
  if (error.code != ErrorCode::kTimeout && error.code != ErrorCode::kInvalidData) {
    return StreamEnd{error.message, error.code == ErrorCode::kEndOfStream};
  }
  if (error.code == ErrorCode::kTimeout && source.skippingToKeyframe()) {
    lastFrame_ = SteadyClock::now();  // the stream goes on, its pictures skipped: no stall
    // Told between keyframes too: a picture stream somebody starts watching decodes again
    // within a read's timeout, not at the next keyframe.
    followKeyframesOnly(source);
    return std::nullopt;
  }
  if (error.code == ErrorCode::kInvalidData) parts_.health.badFrame(error.message);
  return stalled();
}

std::optional<StreamEnd> StreamSession::stalled() const {
  // A camera sending only corrupt frames is as lost as a silent one.
  if (SteadyClock::now() - lastFrame_ <= stallLimit_) return std::nullopt;
  if (parts_.health.badFrames() == 0) {
    return StreamEnd{fmt::format("no frame for {} ms", stallLimit_.count()), false};
  }
  return StreamEnd{
      fmt::format("no usable frame for {} ms ({} corrupt, the last: {})", stallLimit_.count(),
                  parts_.health.badFrames(), parts_.health.lastBadFrame()),
      false};
}

void StreamSession::followKeyframesOnly(FrameSource& source) {
  if (parts_.sink.keyframesOnly() == keyframesOnly_) return;
  keyframesOnly_ = !keyframesOnly_;
  source.setKeyframesOnly(keyframesOnly_);
}

}  // namespace vigil
