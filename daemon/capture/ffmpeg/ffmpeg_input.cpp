#include "daemon/capture/ffmpeg/ffmpeg_input.h"

extern "C" {
#include <libavformat/avformat.h>
}

#include <vector>

#include "daemon/capture/ffmpeg/ffmpeg_decoder.h"

namespace vigil {

Expected<void> openFfmpegInput(const std::string& location, std::chrono::milliseconds timeout,
                               bool rtspOverTcp, FfmpegDeadline& deadline,
                               AVFormatContext*& formatOut, int& stream, const AVCodec*& codec) {
  AVFormatContext* format = avformat_alloc_context();
  if (format == nullptr) return makeError(ErrorCode::kUnavailable, "out of memory");
  format->interrupt_callback.callback = &FfmpegDeadline::expired;
  format->interrupt_callback.opaque = &deadline;
  deadline.setFrom(timeout);
  AVDictionary* options = nullptr;
  if (rtspOverTcp) av_dict_set(&options, "rtsp_transport", "tcp", 0);
  // On failure avformat_open_input frees the context itself.
  const int opened = avformat_open_input(&format, location.c_str(), nullptr, &options);
  av_dict_free(&options);
  if (opened < 0) return deadline.failure(location, "cannot open", opened, timeout);
  formatOut = format;
  deadline.setFrom(timeout);
  // The probe decodes a few pictures with decoders of its own: bounded the same way.
  std::vector<AVDictionary*> probeOptions(format->nb_streams, nullptr);
  for (AVDictionary*& probe : probeOptions) {
    av_dict_set_int(&probe, "max_pixels", kMaxFfmpegPixels, 0);
  }
  const int probed = avformat_find_stream_info(format, probeOptions.data());
  for (AVDictionary*& probe : probeOptions) av_dict_free(&probe);
  if (probed < 0) {
    return deadline.failure(location, "cannot read the stream's format", probed, timeout);
  }
  stream = av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
  if (stream < 0 || codec == nullptr) {
    return makeError(ErrorCode::kUnavailable, "{}: no video stream FFmpeg can decode", location);
  }
  const AVCodecParameters* parameters = format->streams[stream]->codecpar;
  if (parameters->width <= 0 || parameters->height <= 0) {
    // The probe decoded no picture in its time: pictures too large (see kMaxFfmpegPixels),
    // corrupt, or none at all. Reading on would only count decode errors with the camera
    // "starting".
    return makeError(ErrorCode::kUnavailable,
                     "{}: no picture size: FFmpeg decoded no picture of the {} stream in {} ms "
                     "(too large, corrupt or none)",
                     location, codec->name, timeout.count());
  }
  return {};
}

}  // namespace vigil
