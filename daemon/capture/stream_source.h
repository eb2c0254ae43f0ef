#pragma once

#include <memory>

#include "daemon/capture/frame_source.h"

namespace vigil {

struct CameraConfig;

// rtsp://, http(s):// (MJPEG and other streams FFmpeg understands) and file: sources through
// OpenCV's FFmpeg VideoCapture. Files are replayed at their own frame rate, from the start
// again when `loop` is set; a file that ends without loop gives kEndOfStream. A network stream
// that ends, stalls past the read timeout or refuses gives kUnavailable.
std::unique_ptr<FrameSource> makeStreamSource(const CameraConfig& camera);

}  // namespace vigil
