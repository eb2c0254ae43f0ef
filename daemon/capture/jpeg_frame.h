#pragma once

#include <cstdint>
#include <opencv2/core.hpp>
#include <optional>
#include <span>

#include "detector/error.h"

namespace vigil {

// One camera JPEG (a V4L2 MJPEG buffer, a part of an MJPEG network stream), checked and decoded.
// Threads: any; the functions touch only their arguments. Never throw.

// What can be told of a JPEG before decoding it, cheaply, at capture time: its start and end
// markers and that its header declares `width` x `height`, the stream's size (a damaged header
// may declare any size, and the decoder would allocate it before finding the rest broken).
// kInvalidData "corrupt frame: ..." otherwise.
Expected<void> checkJpegFrame(std::span<const std::uint8_t> data, int width, int height);

// The picture size a JPEG's frame header declares, or nullopt when there is none before the scan.
std::optional<cv::Size> jpegDeclaredSize(std::span<const std::uint8_t> data);

// The size libjpeg decodes a `full` picture to at 1/`reduction`: rounded up (jdiv_round_up in
// jpeg_calc_output_dimensions).
cv::Size jpegReducedSize(cv::Size full, int reduction);

// Decodes a checked JPEG of `full` size at 1/`reduction` (1, 2, 4 or 8: libjpeg's scaled IDCT,
// the size rounded up as libjpeg does) into `out`, BGR or grey, reusing `out`'s storage when its
// size is unchanged. A JPEG that does not decode is kInvalidData "corrupt frame: ...", and `out`
// then holds no usable picture (never the previous one again).
Expected<void> decodeJpeg(std::span<const std::uint8_t> data, cv::Size full, int reduction,
                          bool grey, cv::Mat& out);

}  // namespace vigil
