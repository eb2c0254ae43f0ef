#pragma once

#include <chrono>
#include <string>

#include "daemon/base/error.h"
#include "daemon/capture/ffmpeg/ffmpeg_deadline.h"

struct AVCodec;
struct AVFormatContext;

namespace vigil {

// Opens `location` (a stream's URL or a file) with FFmpeg's libavformat, each blocking step
// bounded by `timeout` and interruptible through `deadline`: the input (RTSP over TCP when
// `rtspOverTcp`), its probe (pictures up to kMaxFfmpegPixels), and its best video stream, which
// must have a picture size. `formatOut` is written as soon as the input is open: the caller
// closes it, on failure too. `stream` and `codec`: the video stream's index and decoder.
// Errors (kUnavailable) name `location` and say a stop, the deadline, or FFmpeg's reason.
Expected<void> openFfmpegInput(const std::string& location, std::chrono::milliseconds timeout,
                               bool rtspOverTcp, FfmpegDeadline& deadline,
                               AVFormatContext*& formatOut, int& stream, const AVCodec*& codec);

}  // namespace vigil
