#pragma once

#include <cstddef>
#include <cstdint>
#include <opencv2/core.hpp>
#include <span>

#include "detector/error.h"

namespace vigil {

// The conversion V4l2Source::read() does, exposed for tests: one V4L2 buffer of `pixelFormat`
// (YUYV, MJPG or JPEG) into 8-bit BGR `out`, reusing its storage when the size is unchanged.
// YUYV rows are `bytesPerLine` apart. A JPEG without its start or end marker, one that does not
// decode, and a YUYV buffer too short for width x height are kInvalidData "corrupt frame: ..."
// (and `out` then holds no usable picture); another pixel format is kUnsupported. Never throws.
// Threads: any; it touches only its arguments.
Expected<void> decodeV4l2Frame(std::uint32_t pixelFormat, std::span<const std::uint8_t> data,
                               int width, int height, std::size_t bytesPerLine, cv::Mat& out);

}  // namespace vigil
