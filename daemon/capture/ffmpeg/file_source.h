#pragma once

#include <memory>

#include "daemon/capture/frame/frame_source.h"

namespace vigil {

struct CameraConfig;

// file: sources, video files read with FFmpeg directly (FfmpegReader: pictures kept as they
// arrive, converted only when taken), replayed at their own frame rate, from the start again
// when `loop` is set; a file that ends without loop gives kEndOfStream. Only regular files are
// opened: a FIFO or a device under file: would block the open until a writer comes (forever), so
// it is refused (kInvalidArgument) with the reason.
std::unique_ptr<FrameSource> makeFileSource(const CameraConfig& camera);

}  // namespace vigil
