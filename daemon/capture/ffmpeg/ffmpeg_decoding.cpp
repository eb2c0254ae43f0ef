#include "daemon/capture/ffmpeg/ffmpeg_decoding.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/hwcontext.h>
}

#include <fmt/format.h>

#include <cerrno>

#include "daemon/capture/ffmpeg/ffmpeg_decoder.h"

namespace vigil {

FfmpegDecoding::FfmpegDecoding(const std::string& location, DeliveredPictures& delivered)
    : location_(location), delivered_(delivered) {}

FfmpegDecoding::~FfmpegDecoding() { close(); }

Expected<void> FfmpegDecoding::open(const AVStream& stream, const HwDecode& hw, SourceInfo& info) {
  const DecoderWish wish{hw, skipLoopFilter_, hwFailed_};
  if (auto opened = openFfmpegDecoder(stream, wish, location_, decoder_, hwDevice_, info);
      !opened) {
    return opened;
  }
  received_ = av_frame_alloc();
  newest_ = av_frame_alloc();
  if (received_ == nullptr || newest_ == nullptr) {
    return makeError(ErrorCode::kUnavailable, "out of memory");
  }
  skipping_.attach(decoder_);
  return {};
}

void FfmpegDecoding::close() {
  skipping_.detach();
  av_frame_free(&received_);
  av_frame_free(&newest_);
  avcodec_free_context(&decoder_);
  av_buffer_unref(&hwDevice_);
  flushing_ = false;
}

std::optional<Expected<void>> FfmpegDecoding::replayBacklog(CapturedPicture& picture) {
  if (skipping_.replayDue() && replayedNewPicture()) return deliver(newest_, picture);
  return std::nullopt;
}

Expected<bool> FfmpegDecoding::receive() {
  for (;;) {
    const int rc = avcodec_receive_frame(decoder_, received_);
    if (rc == 0) {
      if (deliveredAlready(received_)) continue;
      return true;
    }
    if (rc == AVERROR(EAGAIN)) return false;
    if (rc == AVERROR_EOF) {
      return makeError(ErrorCode::kEndOfStream, "{}: stream ended or stalled: {}", location_,
                       describeAvError(rc));
    }
    if (hwDevice_ != nullptr) {
      // The hardware failed: the camera reopens, and from then on decodes in software.
      hwFailed_ = fmt::format("VAAPI decoding failed: {}", describeAvError(rc));
    }
    return makeError(ErrorCode::kUnavailable, "{}: the decoder stopped: {}", location_,
                     describeAvError(rc));
  }
}

void FfmpegDecoding::dropReceived() { av_frame_unref(received_); }

std::optional<Expected<void>> FfmpegDecoding::decodePacket(AVPacket* packet, double seconds,
                                                           CapturedPicture& picture) {
  switch (skipping_.admit(packet, seconds)) {
    case PictureSkipping::Verdict::kKeep:
      // Idle, pictures only: kept for a replay, not sent.
      av_packet_unref(packet);
      return std::nullopt;
    case PictureSkipping::Verdict::kWake:
      // Kept, not sent: idle, and the picture changed between keyframes: from the last keyframe
      // on at once (the motion check decides whether it leaves idle).
      av_packet_unref(packet);
      if (replayedNewPicture()) return deliver(newest_, picture);
      return std::nullopt;
    case PictureSkipping::Verdict::kSendAndDrain:
      return sendKeyframeAndDrain(packet, picture);
    case PictureSkipping::Verdict::kSend:
      break;
  }
  const int rc = avcodec_send_packet(decoder_, packet);
  av_packet_unref(packet);
  return refusedPacket(rc);
}

std::optional<Expected<void>> FfmpegDecoding::sendKeyframeAndDrain(AVPacket* packet,
                                                                   CapturedPicture& picture) {
  const int rc = avcodec_send_packet(decoder_, packet);
  av_packet_unref(packet);
  if (rc < 0) return refusedPacket(rc);
  if (skipping_.drainKeyframe(received_, newest_)) return deliver(newest_, picture);
  return std::nullopt;
}

std::optional<Expected<void>> FfmpegDecoding::refusedPacket(int rc) const {
  if (rc >= 0 || rc == AVERROR(EAGAIN)) return std::nullopt;
  // A corrupt packet: this frame is lost, the stream goes on (counted as a decode error).
  return makeError(ErrorCode::kInvalidData, "{}: the decoder refused a packet: {}", location_,
                   describeAvError(rc));
}

void FfmpegDecoding::flush() {
  flushing_ = true;
  avcodec_send_packet(decoder_, nullptr);
}

bool FfmpegDecoding::setSkipNonReference(bool skip) {
  if (decoder_ == nullptr) return false;
  skipping_.setSkipNonReference(skip);
  return true;
}

Expected<void> FfmpegDecoding::deliver(AVFrame* decoded, CapturedPicture& picture) {
  if (decoded->format == AV_PIX_FMT_VAAPI && decoded->hw_frames_ctx == nullptr) {
    av_frame_unref(decoded);
    return makeError(ErrorCode::kInvalidData, "{}: a VAAPI picture without its frames", location_);
  }
  if (decoded->width <= 0 || decoded->height <= 0) {
    av_frame_unref(decoded);
    return makeError(ErrorCode::kInvalidData, "{}: the decoder gave an empty picture", location_);
  }
  delivered_.delivered(decoded->best_effort_timestamp);
  picture.takeFfmpeg(decoded);  // by reference: converted only when taken
  return {};
}

bool FfmpegDecoding::replayedNewPicture() {
  delivered_.replayStarts();
  return skipping_.replay(received_, newest_) && !deliveredAlready(newest_);
}

bool FfmpegDecoding::deliveredAlready(AVFrame* decoded) {
  const bool again = delivered_.again(decoded->best_effort_timestamp);
  if (again) av_frame_unref(decoded);
  return again;
}

}  // namespace vigil
