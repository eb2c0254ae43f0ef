#pragma once

#include <cstddef>
#include <cstdint>
#include <opencv2/core.hpp>
#include <span>

#include "daemon/base/error.h"
#include "daemon/capture/picture/captured_picture.h"

namespace vigil {

// What V4l2Source::read() does with a buffer, exposed for tests: one V4L2 buffer of `pixelFormat`
// (YUYV, MJPG or JPEG) checked and kept as it arrived in `out` (copied out of the driver's
// buffer, not decoded: whoever takes the frame decodes it, at the size it needs). YUYV rows are
// `bytesPerLine` apart. A JPEG without its start or end marker or whose header declares another
// size than the stream's, and a YUYV buffer too short for width x height, are kInvalidData
// "corrupt frame: ..." (`out` is then cleared); another pixel format is kUnsupported. Never
// throws. Threads: any; it touches only its arguments.
Expected<void> captureV4l2Frame(std::uint32_t pixelFormat, std::span<const std::uint8_t> data,
                                int width, int height, std::size_t bytesPerLine,
                                CapturedPicture& out);

// captureV4l2Frame, then the whole picture decoded to 8-bit BGR `out` at once (its storage
// reused when the size is unchanged), as the capture thread did before pictures were decoded on
// demand: for the tests that compare the two, and the fuzzer. A JPEG that does not decode is
// kInvalidData "corrupt frame: ...".
Expected<void> decodeV4l2Frame(std::uint32_t pixelFormat, std::span<const std::uint8_t> data,
                               int width, int height, std::size_t bytesPerLine, cv::Mat& out);

}  // namespace vigil
