#include "daemon/capture/ffmpeg/ffmpeg_decoder.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/hwcontext.h>
}

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace vigil {

namespace {

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

// Picks VAAPI surfaces when the decoder offers them for this stream, else its first software
// format (FFmpeg's own fallback for a stream the hardware cannot decode).
enum AVPixelFormat pickVaapi(AVCodecContext*, const enum AVPixelFormat* formats) {
  for (const enum AVPixelFormat* f = formats; *f != AV_PIX_FMT_NONE; ++f) {
    if (*f == AV_PIX_FMT_VAAPI) return *f;
  }
  return formats[0];
}

// VAAPI for the decoder about to open; false (and info.hwFallback) when it cannot be had.
bool attachVaapi(const AVCodec* codec, const DecoderWish& wish, AVCodecContext* decoder,
                 AVBufferRef*& hwDevice, SourceInfo& info) {
  const HwDecode& hw = wish.hw;
  if (hw.accel != HwAccel::kVaapi) return false;
  if (!wish.hwFailed.empty()) {
    info.hwFallback = wish.hwFailed;
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
  hwDevice = *device;
  decoder->hw_device_ctx = av_buffer_ref(hwDevice);
  decoder->get_format = &pickVaapi;
  return decoder->hw_device_ctx != nullptr;
}

}  // namespace

std::string describeAvError(int code) {
  char text[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(code, text, sizeof text);
  return text;
}

Expected<void> probeVaapi(const std::string& device) {
  auto context = openVaapiDevice(device);
  if (!context) return tl::unexpected(context.error());
  av_buffer_unref(&*context);
  return {};
}

Expected<void> openFfmpegDecoder(const AVStream& stream, const DecoderWish& wish,
                                 const std::string& location, AVCodecContext*& decoder,
                                 AVBufferRef*& hwDevice, SourceInfo& info) {
  const AVCodec* codec = avcodec_find_decoder(stream.codecpar->codec_id);
  if (codec == nullptr) {
    return makeError(ErrorCode::kUnavailable, "{}: no decoder for the video stream", location);
  }
  decoder = avcodec_alloc_context3(codec);
  if (decoder == nullptr || avcodec_parameters_to_context(decoder, stream.codecpar) < 0) {
    return makeError(ErrorCode::kUnavailable, "{}: cannot set up the {} decoder", location,
                     codec->name);
  }
  decoder->max_pixels = kMaxFfmpegPixels;
  // Slice threads only: frame threads would hold frames back, one per thread, as latency.
  decoder->thread_count = 0;
  decoder->thread_type = FF_THREAD_SLICE;
  const bool vaapi = attachVaapi(codec, wish, decoder, hwDevice, info);
  info.decoder = fmt::format("FFmpeg {}, {}", codec->name, vaapi ? "VAAPI" : "software");
  const bool loopFiltered =
      codec->id == AV_CODEC_ID_H264 || codec->id == AV_CODEC_ID_HEVC;  // in-loop deblocking
  if (wish.skipLoopFilter && !vaapi && loopFiltered) {
    decoder->skip_loop_filter = AVDISCARD_ALL;
    info.decoder += ", loop filter skipped";
  }
  if (int rc = avcodec_open2(decoder, codec, nullptr); rc < 0) {
    return makeError(ErrorCode::kUnavailable, "{}: cannot open the {} decoder: {}", location,
                     codec->name, describeAvError(rc));
  }
  return {};
}

}  // namespace vigil
