#include "daemon/capture/ffmpeg/ffmpeg_reader.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
}

#include <sys/stat.h>

#include <cstring>
#include <span>
#include <vector>

#include "daemon/capture/ffmpeg/ffmpeg_decoder.h"
#include "daemon/capture/ffmpeg/ffmpeg_input.h"
#include "daemon/capture/ffmpeg/ffmpeg_log.h"
#include "daemon/capture/picture/jpeg_frame.h"

namespace vigil {

namespace {

// The video packet just read: seconds into the video (decode order), or on the steady clock
// when it has no timestamp.
double packetSeconds(const AVStream& stream, const AVPacket& packet) {
  const std::int64_t time = packet.dts != AV_NOPTS_VALUE ? packet.dts : packet.pts;
  if (time == AV_NOPTS_VALUE) {
    return std::chrono::duration<double>(SteadyClock::now().time_since_epoch()).count();
  }
  return static_cast<double>(time) * av_q2d(stream.time_base);
}

}  // namespace

FfmpegReader::FfmpegReader(std::string location) : location_(std::move(location)) {
  routeFfmpegLogs();
}

FfmpegReader::~FfmpegReader() { close(); }

Expected<SourceInfo> FfmpegReader::open(std::chrono::milliseconds timeout, bool rtspOverTcp,
                                        const HwDecode& hw) {
  close();
  if (deadline_.interrupted()) {
    return makeError(ErrorCode::kUnavailable, "{}: interrupted", location_);
  }
  const AVCodec* codec = nullptr;
  auto input = openFfmpegInput(location_, timeout, rtspOverTcp, deadline_, format_, stream_, codec);
  if (!input) return tl::unexpected(input.error());
  AVStream* stream = format_->streams[stream_];
  width_ = stream->codecpar->width;
  height_ = stream->codecpar->height;
  packet_ = av_packet_alloc();
  if (packet_ == nullptr) return makeError(ErrorCode::kUnavailable, "out of memory");
  SourceInfo info;
  // An MJPEG stream's pictures stand alone: each is kept as its JPEG and decoded only when
  // taken, at the size needed, instead of every one at full size here.
  if (codec->id != AV_CODEC_ID_MJPEG) {
    if (auto decoder = decoding_.open(*stream, hw, info); !decoder) {
      return tl::unexpected(decoder.error());
    }
  } else {
    // Not subject to hwaccel: a JPEG at 1/4 scale on the CPU costs less than a hardware
    // decode and its download.
    info.decoder = "libjpeg, on demand";
  }
  info.width = width_;
  info.height = height_;
  const AVRational rate = av_guess_frame_rate(format_, stream, nullptr);
  info.fps = rate.num > 0 && rate.den > 0 ? av_q2d(rate) : 0;
  info.pixelFormat = std::string(codec->name) + " (ffmpeg)";
  return info;
}

Expected<void> FfmpegReader::read(CapturedPicture& picture, std::chrono::milliseconds timeout) {
  if (format_ == nullptr || packet_ == nullptr) {
    return makeError(ErrorCode::kUnavailable, "{}: not open", location_);
  }
  deadline_.setFrom(timeout);
  return decoding_.isOpen() ? readDecoded(picture, timeout) : readJpeg(picture, timeout);
}

Expected<void> FfmpegReader::readJpeg(CapturedPicture& picture, std::chrono::milliseconds timeout) {
  for (;;) {
    const int rc = av_read_frame(format_, packet_);
    if (rc == AVERROR_EOF && !deadline_.interrupted()) {
      return makeError(ErrorCode::kEndOfStream, "{}: stream ended or stalled: {}", location_,
                       describeAvError(rc));
    }
    if (rc < 0) return deadline_.failure(location_, "stream ended or stalled", rc, timeout);
    if (packet_->stream_index != stream_) {
      av_packet_unref(packet_);
      continue;
    }
    if (auto turn = waitForTurn(); !turn) {
      av_packet_unref(packet_);
      return turn;
    }
    const std::span<const std::uint8_t> bytes(packet_->data,
                                              static_cast<std::size_t>(packet_->size));
    auto checked = checkJpegFrame(bytes, width_, height_);
    if (checked) {
      picture.setJpeg(bytes, cv::Size(width_, height_));
      delivered_.delivered(packet_->pts);
    }
    av_packet_unref(packet_);
    if (!checked) {
      // This picture is lost, the stream goes on (counted as a decode error).
      return makeError(ErrorCode::kInvalidData, "{}: {}", location_, checked.error().message);
    }
    return {};
  }
}

Expected<void> FfmpegReader::readDecoded(CapturedPicture& picture,
                                         std::chrono::milliseconds timeout) {
  const auto skippingUntil = SteadyClock::now() + timeout;
  // Leaving idle: from the last keyframe to the newest packet at once.
  if (auto replayed = decoding_.replayBacklog(picture)) return *replayed;
  for (;;) {
    auto received = decoding_.receive();
    if (!received) return tl::unexpected(received.error());
    if (*received) return deliverReceived(picture);
    if (decoding_.flushing()) {
      return makeError(ErrorCode::kEndOfStream, "{}: stream ended", location_);
    }
    if (decoding_.skippingToKeyframe() && SteadyClock::now() > skippingUntil) {
      // The stream goes on, its pictures skipped: no stall, and the caller is not held longer.
      return makeError(ErrorCode::kTimeout, "{}: no keyframe within {} ms (skipping to it)",
                       location_, timeout.count());
    }
    if (auto decoded = feedDecoder(picture, timeout)) return *decoded;
  }
}

Expected<void> FfmpegReader::deliverReceived(CapturedPicture& picture) {
  if (decoding_.flushing()) {
    if (auto turn = waitForTurn(); !turn) {
      decoding_.dropReceived();
      return turn;
    }
  }
  return decoding_.deliverReceived(picture);
}

std::optional<Expected<void>> FfmpegReader::feedDecoder(CapturedPicture& picture,
                                                        std::chrono::milliseconds timeout) {
  const int rc = av_read_frame(format_, packet_);
  if (rc == AVERROR_EOF && !deadline_.interrupted()) {
    // The decoder may still hold pictures (reordering): ask for them before saying the end.
    decoding_.flush();
    return std::nullopt;
  }
  if (rc < 0) return deadline_.failure(location_, "stream ended or stalled", rc, timeout);
  // Packets arriving are no stall, even when none of them makes a picture (keyframes only).
  deadline_.setFrom(timeout);
  if (packet_->stream_index != stream_) {
    av_packet_unref(packet_);
    return std::nullopt;
  }
  if (auto turn = waitForTurn(); !turn) {
    av_packet_unref(packet_);
    return turn;
  }
  return decoding_.decodePacket(packet_, packetSeconds(*format_->streams[stream_], *packet_),
                                picture);
}

std::optional<double> FfmpegReader::pictureTime() const {
  if (format_ == nullptr || delivered_.last() == AV_NOPTS_VALUE) return std::nullopt;
  const AVStream* stream = format_->streams[stream_];
  const std::int64_t start = stream->start_time == AV_NOPTS_VALUE ? 0 : stream->start_time;
  return static_cast<double>(delivered_.last() - start) * av_q2d(stream->time_base);
}

Expected<void> FfmpegReader::waitForTurn() {
  if (!pace_ || pace_()) return {};
  return makeError(ErrorCode::kUnavailable, "{}: interrupted (stop)", location_);
}

void FfmpegReader::close() {
  av_packet_free(&packet_);
  decoding_.close();
  avformat_close_input(&format_);
  stream_ = -1;
  width_ = height_ = 0;
  delivered_.clear();
}

}  // namespace vigil
