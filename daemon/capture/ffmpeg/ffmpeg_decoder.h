#pragma once

#include <cstdint>
#include <string>

#include "daemon/base/error.h"
#include "daemon/capture/frame/frame_source.h"
#include "daemon/settings/settings.h"

struct AVBufferRef;
struct AVCodecContext;
struct AVStream;

namespace vigil {

// The largest picture decoded: 8K UHD. A stream may declare anything (a JPEG header saying
// 40000x40000 asks FFmpeg for 2.4 GB); larger pictures are refused before their memory is.
inline constexpr std::int64_t kMaxFfmpegPixels = 7680 * 4320;

// FFmpeg's text for one of its error codes.
std::string describeAvError(int code);

// Whether FFmpeg can open the VAAPI device `device` (a DRM render node) here and now: what a
// camera with hwaccel vaapi would meet (vigil doctor). The reason when not. Threads: any.
Expected<void> probeVaapi(const std::string& device);

// How a camera wants its pictures decoded: `hw` (VAAPI when asked and to be had), the loop
// filter skipped (capture.skip_loop_filter, software H.264 and H.265 only), and `hwFailed`: why
// hardware decoding already failed on this reader (sticky: software from then on).
struct DecoderWish {
  HwDecode hw;
  bool skipLoopFilter = false;
  std::string hwFailed;
};

// Opens FFmpeg's decoder for `stream` as `wish` says, with slice threads only (frame threads
// would hold pictures back as latency) and pictures up to kMaxFfmpegPixels. `decoder` and
// `hwDevice` are written as soon as they exist: the caller frees them, on failure too. `info`
// gets the decoder's description ("FFmpeg h264, software, loop filter skipped") and, without
// the hardware decode asked for, why (hwFallback). Errors name `location`. Threads: any.
Expected<void> openFfmpegDecoder(const AVStream& stream, const DecoderWish& wish,
                                 const std::string& location, AVCodecContext*& decoder,
                                 AVBufferRef*& hwDevice, SourceInfo& info);

}  // namespace vigil
