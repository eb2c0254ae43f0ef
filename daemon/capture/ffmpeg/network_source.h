#pragma once

#include <memory>

#include "daemon/capture/frame/frame_source.h"

namespace vigil {

// An RTSP or HTTP(S) camera, read with FFmpeg directly (FfmpegReader: pictures kept as they
// arrive, converted only when taken). Open and read are bounded by deadlines (open 5 s, a frame
// 2 s: a stream that sends nothing for that long is lost), and interrupt() ends either at once,
// from any thread, through FFmpeg's interrupt callback. OpenCV's VideoCapture, which read these
// before, lets nothing interrupt it, so a camera stopping inside a stalled read or a hanging
// open held the daemon's stop for its whole timeout.
std::unique_ptr<FrameSource> makeNetworkSource(const CameraConfig& camera);

}  // namespace vigil
