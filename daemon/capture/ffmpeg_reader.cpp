#include "daemon/capture/ffmpeg_reader.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/hwcontext.h>
}

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <span>
#include <vector>

#include "daemon/capture/ffmpeg_log.h"
#include "daemon/capture/jpeg_frame.h"

namespace vigil {

namespace {

// The largest picture decoded: 8K UHD. A stream may declare anything (a JPEG header saying
// 40000x40000 asks FFmpeg for 2.4 GB); larger pictures are refused before their memory is.
constexpr std::int64_t kMaxPixels = 7680 * 4320;

std::string describeAvError(int code) {
  char text[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(code, text, sizeof text);
  return text;
}

// FFmpeg's VAAPI device on `device`, or why not. FFmpeg says only "Invalid argument" for a node
// that is not there, so that is told first.
Expected<AVBufferRef*> openVaapiDevice(const std::string& device) {
  struct stat node {};
  if (::stat(device.c_str(), &node) != 0) {
    return makeError(ErrorCode::kUnavailable,
                     "VAAPI device {}: {} (no GPU, or its driver not loaded)", device,
                     std::strerror(errno));
  }
  AVBufferRef* context = nullptr;
  if (int rc = av_hwdevice_ctx_create(&context, AV_HWDEVICE_TYPE_VAAPI, device.c_str(), nullptr, 0);
      rc < 0) {
    return makeError(ErrorCode::kUnavailable, "VAAPI device {}: {}", device, describeAvError(rc));
  }
  return context;
}

}  // namespace

Expected<void> probeVaapi(const std::string& device) {
  auto context = openVaapiDevice(device);
  if (!context) return tl::unexpected(context.error());
  av_buffer_unref(&*context);
  return {};
}

FfmpegReader::FfmpegReader(std::string location) : location_(std::move(location)) {
  routeFfmpegLogs();
}

FfmpegReader::~FfmpegReader() { close(); }

int FfmpegReader::interruptRequested(void* opaque) {
  auto* self = static_cast<FfmpegReader*>(opaque);
  return self->interrupted_ || SteadyClock::now().time_since_epoch().count() > self->deadline_ ? 1
                                                                                               : 0;
}

void FfmpegReader::setDeadline(std::chrono::milliseconds from) {
  deadline_ = (SteadyClock::now() + from).time_since_epoch().count();
}

tl::unexpected<Error> FfmpegReader::failure(const char* what, int rc,
                                            std::chrono::milliseconds limit) const {
  if (interrupted_) return makeError(ErrorCode::kUnavailable, "{}: interrupted (stop)", location_);
  if (SteadyClock::now().time_since_epoch().count() > deadline_) {
    return makeError(ErrorCode::kUnavailable, "{}: {}: nothing for {} ms", location_, what,
                     limit.count());
  }
  return makeError(ErrorCode::kUnavailable, "{}: {}: {}", location_, what, describeAvError(rc));
}

Expected<SourceInfo> FfmpegReader::open(std::chrono::milliseconds timeout, bool rtspOverTcp,
                                        const HwDecode& hw) {
  close();
  if (interrupted_) return makeError(ErrorCode::kUnavailable, "{}: interrupted", location_);
  AVFormatContext* format = avformat_alloc_context();
  if (format == nullptr) return makeError(ErrorCode::kUnavailable, "out of memory");
  format->interrupt_callback.callback = &FfmpegReader::interruptRequested;
  format->interrupt_callback.opaque = this;
  setDeadline(timeout);
  AVDictionary* options = nullptr;
  if (rtspOverTcp) av_dict_set(&options, "rtsp_transport", "tcp", 0);
  // On failure avformat_open_input frees the context itself.
  const int opened = avformat_open_input(&format, location_.c_str(), nullptr, &options);
  av_dict_free(&options);
  if (opened < 0) return failure("cannot open", opened, timeout);
  format_ = format;
  setDeadline(timeout);
  // The probe decodes a few pictures with decoders of its own: bounded the same way.
  std::vector<AVDictionary*> probeOptions(format_->nb_streams, nullptr);
  for (AVDictionary*& probe : probeOptions) av_dict_set_int(&probe, "max_pixels", kMaxPixels, 0);
  const int probed = avformat_find_stream_info(format_, probeOptions.data());
  for (AVDictionary*& probe : probeOptions) av_dict_free(&probe);
  if (probed < 0) return failure("cannot read the stream's format", probed, timeout);
  const AVCodec* codec = nullptr;
  stream_ = av_find_best_stream(format_, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
  if (stream_ < 0 || codec == nullptr) {
    return makeError(ErrorCode::kUnavailable, "{}: no video stream FFmpeg can decode", location_);
  }
  AVStream* stream = format_->streams[stream_];
  width_ = stream->codecpar->width;
  height_ = stream->codecpar->height;
  if (width_ <= 0 || height_ <= 0) {
    // The probe decoded no picture in its time: pictures too large (see kMaxPixels), corrupt,
    // or none at all. Reading on would only count decode errors with the camera "starting".
    return makeError(ErrorCode::kUnavailable,
                     "{}: no picture size: FFmpeg decoded no picture of the {} stream in {} ms "
                     "(too large, corrupt or none)",
                     location_, codec->name, timeout.count());
  }
  packet_ = av_packet_alloc();
  if (packet_ == nullptr) return makeError(ErrorCode::kUnavailable, "out of memory");
  SourceInfo info;
  // An MJPEG stream's pictures stand alone: each is kept as its JPEG and decoded only when
  // taken, at the size needed, instead of every one at full size here.
  if (codec->id != AV_CODEC_ID_MJPEG) {
    if (auto decoder = openDecoder(hw, info); !decoder) return tl::unexpected(decoder.error());
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

namespace {

// Picks VAAPI surfaces when the decoder offers them for this stream, else its first software
// format (FFmpeg's own fallback for a stream the hardware cannot decode).
enum AVPixelFormat pickVaapi(AVCodecContext*, const enum AVPixelFormat* formats) {
  for (const enum AVPixelFormat* f = formats; *f != AV_PIX_FMT_NONE; ++f) {
    if (*f == AV_PIX_FMT_VAAPI) return *f;
  }
  return formats[0];
}

}  // namespace

bool FfmpegReader::attachVaapi(const AVCodec* codec, const HwDecode& hw, SourceInfo& info) {
  if (hw.accel != HwAccel::kVaapi) return false;
  if (!hwFailed_.empty()) {
    info.hwFallback = hwFailed_;
    return false;
  }
  bool supported = false;
  for (int i = 0;; ++i) {
    const AVCodecHWConfig* config = avcodec_get_hw_config(codec, i);
    if (config == nullptr) break;
    if (config->device_type == AV_HWDEVICE_TYPE_VAAPI &&
        (config->methods & AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX) != 0) {
      supported = true;
    }
  }
  if (!supported) {
    info.hwFallback = fmt::format("FFmpeg's {} decoder has no VAAPI support", codec->name);
    return false;
  }
  auto device = openVaapiDevice(hw.device);
  if (!device) {
    info.hwFallback = device.error().message;
    return false;
  }
  hwDevice_ = *device;
  decoder_->hw_device_ctx = av_buffer_ref(hwDevice_);
  decoder_->get_format = &pickVaapi;
  return decoder_->hw_device_ctx != nullptr;
}

Expected<void> FfmpegReader::openDecoder(const HwDecode& hw, SourceInfo& info) {
  AVStream* stream = format_->streams[stream_];
  const AVCodec* codec = avcodec_find_decoder(stream->codecpar->codec_id);
  if (codec == nullptr) {
    return makeError(ErrorCode::kUnavailable, "{}: no decoder for the video stream", location_);
  }
  decoder_ = avcodec_alloc_context3(codec);
  if (decoder_ == nullptr || avcodec_parameters_to_context(decoder_, stream->codecpar) < 0) {
    return makeError(ErrorCode::kUnavailable, "{}: cannot set up the {} decoder", location_,
                     codec->name);
  }
  decoder_->max_pixels = kMaxPixels;
  // Slice threads only: frame threads would hold frames back, one per thread, as latency.
  decoder_->thread_count = 0;
  decoder_->thread_type = FF_THREAD_SLICE;
  const bool vaapi = attachVaapi(codec, hw, info);
  info.decoder = fmt::format("FFmpeg {}, {}", codec->name, vaapi ? "VAAPI" : "software");
  const bool loopFiltered =
      codec->id == AV_CODEC_ID_H264 || codec->id == AV_CODEC_ID_HEVC;  // in-loop deblocking
  if (skipLoopFilter_ && !vaapi && loopFiltered) {
    decoder_->skip_loop_filter = AVDISCARD_ALL;
    info.decoder += ", loop filter skipped";
  }
  if (int rc = avcodec_open2(decoder_, codec, nullptr); rc < 0) {
    return makeError(ErrorCode::kUnavailable, "{}: cannot open the {} decoder: {}", location_,
                     codec->name, describeAvError(rc));
  }
  picture_ = av_frame_alloc();
  newest_ = av_frame_alloc();
  if (picture_ == nullptr || newest_ == nullptr) {
    return makeError(ErrorCode::kUnavailable, "out of memory");
  }
  skipping_.attach(decoder_);
  return {};
}

Expected<void> FfmpegReader::read(CapturedPicture& picture, std::chrono::milliseconds timeout) {
  if (format_ == nullptr || packet_ == nullptr) {
    return makeError(ErrorCode::kUnavailable, "{}: not open", location_);
  }
  setDeadline(timeout);
  return decoder_ == nullptr ? readJpeg(picture, timeout) : readDecoded(picture, timeout);
}

Expected<void> FfmpegReader::readJpeg(CapturedPicture& picture, std::chrono::milliseconds timeout) {
  for (;;) {
    const int rc = av_read_frame(format_, packet_);
    if (rc == AVERROR_EOF && !interrupted_) {
      return makeError(ErrorCode::kEndOfStream, "{}: stream ended or stalled: {}", location_,
                       describeAvError(rc));
    }
    if (rc < 0) return failure("stream ended or stalled", rc, timeout);
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
      lastDelivered_ = packet_->pts;
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
  if (skipping_.replayDue() && replayedNewPicture()) {
    return deliver(newest_, picture);
  }
  for (;;) {
    int rc = avcodec_receive_frame(decoder_, picture_);
    if (rc == 0 && deliveredAlready(picture_)) continue;
    if (rc == 0) {
      if (flushing_) {
        if (auto turn = waitForTurn(); !turn) {
          av_frame_unref(picture_);
          return turn;
        }
      }
      return deliver(picture_, picture);
    }
    if (rc == AVERROR_EOF) {
      return makeError(ErrorCode::kEndOfStream, "{}: stream ended or stalled: {}", location_,
                       describeAvError(rc));
    }
    if (rc != AVERROR(EAGAIN)) {
      if (hwDevice_ != nullptr) {
        // The hardware failed: the camera reopens, and from then on decodes in software.
        hwFailed_ = fmt::format("VAAPI decoding failed: {}", describeAvError(rc));
      }
      return makeError(ErrorCode::kUnavailable, "{}: the decoder stopped: {}", location_,
                       describeAvError(rc));
    }
    if (flushing_) {
      return makeError(ErrorCode::kEndOfStream, "{}: stream ended", location_);
    }
    if (skipping_.skippingToKeyframe() && SteadyClock::now() > skippingUntil) {
      // The stream goes on, its pictures skipped: no stall, and the caller is not held longer.
      return makeError(ErrorCode::kTimeout, "{}: no keyframe within {} ms (skipping to it)",
                       location_, timeout.count());
    }
    rc = av_read_frame(format_, packet_);
    if (rc == AVERROR_EOF && !interrupted_) {
      // The decoder may still hold pictures (reordering): ask for them before saying the end.
      flushing_ = true;
      avcodec_send_packet(decoder_, nullptr);
      continue;
    }
    if (rc < 0) return failure("stream ended or stalled", rc, timeout);
    // Packets arriving are no stall, even when none of them makes a picture (keyframes only).
    setDeadline(timeout);
    if (packet_->stream_index == stream_) {
      if (auto turn = waitForTurn(); !turn) {
        av_packet_unref(packet_);
        return turn;
      }
      const auto verdict = skipping_.admit(packet_, packetSeconds());
      if (verdict == PictureSkipping::Verdict::kWake) {
        // Idle, and the picture changed between keyframes: from the last keyframe on at once
        // (the motion check decides whether the camera leaves idle).
        av_packet_unref(packet_);
        if (replayedNewPicture()) return deliver(newest_, picture);
        continue;
      }
      rc = avcodec_send_packet(decoder_, packet_);
      if (verdict == PictureSkipping::Verdict::kSendAndDrain && rc >= 0) {
        av_packet_unref(packet_);
        if (skipping_.drainKeyframe(picture_, newest_)) return deliver(newest_, picture);
        continue;
      }
    }
    av_packet_unref(packet_);
    if (rc < 0 && rc != AVERROR(EAGAIN)) {
      // A corrupt packet: this frame is lost, the stream goes on (counted as a decode error).
      return makeError(ErrorCode::kInvalidData, "{}: the decoder refused a packet: {}", location_,
                       describeAvError(rc));
    }
  }
}

double FfmpegReader::packetSeconds() const {
  const AVStream* stream = format_->streams[stream_];
  const std::int64_t time = packet_->dts != AV_NOPTS_VALUE ? packet_->dts : packet_->pts;
  if (time == AV_NOPTS_VALUE) {
    return std::chrono::duration<double>(SteadyClock::now().time_since_epoch()).count();
  }
  return static_cast<double>(time) * av_q2d(stream->time_base);
}

Expected<void> FfmpegReader::deliver(AVFrame* decoded, CapturedPicture& picture) {
  if (decoded->format == AV_PIX_FMT_VAAPI && decoded->hw_frames_ctx == nullptr) {
    av_frame_unref(decoded);
    return makeError(ErrorCode::kInvalidData, "{}: a VAAPI picture without its frames", location_);
  }
  if (decoded->width <= 0 || decoded->height <= 0) {
    av_frame_unref(decoded);
    return makeError(ErrorCode::kInvalidData, "{}: the decoder gave an empty picture", location_);
  }
  lastDelivered_ = decoded->best_effort_timestamp;
  picture.takeFfmpeg(decoded);  // by reference: converted only when taken
  return {};
}

bool FfmpegReader::replayedNewPicture() {
  // The replay starts at a keyframe delivered already while idle: its picture, first out, is not
  // given again (a stream repeating timestamps elsewhere loses nothing to this).
  replayedKeyframe_ = lastDelivered_;
  return skipping_.replay(picture_, newest_) && !deliveredAlready(newest_);
}

bool FfmpegReader::deliveredAlready(AVFrame* decoded) {
  if (replayedKeyframe_ == AV_NOPTS_VALUE) return false;
  const bool again = decoded->best_effort_timestamp == replayedKeyframe_;
  replayedKeyframe_ = AV_NOPTS_VALUE;  // only the first picture after a replay can be it
  if (again) av_frame_unref(decoded);
  return again;
}

std::optional<double> FfmpegReader::pictureTime() const {
  if (format_ == nullptr || lastDelivered_ == AV_NOPTS_VALUE) return std::nullopt;
  const AVStream* stream = format_->streams[stream_];
  const std::int64_t start = stream->start_time == AV_NOPTS_VALUE ? 0 : stream->start_time;
  return static_cast<double>(lastDelivered_ - start) * av_q2d(stream->time_base);
}

Expected<void> FfmpegReader::waitForTurn() {
  if (!pace_ || pace_()) return {};
  return makeError(ErrorCode::kUnavailable, "{}: interrupted (stop)", location_);
}

bool FfmpegReader::setSkipNonReference(bool skip) {
  if (decoder_ == nullptr) return false;
  skipping_.setSkipNonReference(skip);
  return true;
}

void FfmpegReader::close() {
  av_packet_free(&packet_);
  skipping_.detach();
  av_frame_free(&picture_);
  av_frame_free(&newest_);
  avcodec_free_context(&decoder_);
  av_buffer_unref(&hwDevice_);
  avformat_close_input(&format_);
  stream_ = -1;
  width_ = height_ = 0;
  flushing_ = false;
  lastDelivered_ = replayedKeyframe_ = AV_NOPTS_VALUE;
}

}  // namespace vigil
