// Fuzzes the conversion of one V4L2 buffer into a BGR picture (MJPEG, JPEG and YUYV), the
// path every camera frame takes. The first byte picks the format and a frame size, the rest is
// the buffer as a driver would hand it over. Any buffer must give a picture of that size or
// "corrupt frame", never a crash or a read outside the buffer.
#include <linux/videodev2.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <opencv2/core.hpp>
#include <span>

#include "daemon/capture/v4l2/v4l2_source.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  constexpr std::array<std::uint32_t, 3> kFormats = {V4L2_PIX_FMT_MJPEG, V4L2_PIX_FMT_JPEG,
                                                     V4L2_PIX_FMT_YUYV};
  constexpr std::array<std::array<int, 2>, 4> kSizes = {{{16, 16}, {64, 48}, {2, 1}, {320, 240}}};
  const std::uint32_t format = kFormats[data[0] % kFormats.size()];
  const auto [width, height] = kSizes[(data[0] / kFormats.size()) % kSizes.size()];
  // The driver's buffer: exactly the bytes given, on the heap so ASan sees an overread.
  std::span<const std::uint8_t> buffer(data + 1, size - 1);
  cv::Mat out;
  auto decoded = vigil::decodeV4l2Frame(format, buffer, width, height,
                                        static_cast<std::size_t>(width) * 2, out);
  if (decoded && (out.cols != width || out.rows != height || out.type() != CV_8UC3)) {
    std::abort();  // a success must deliver the picture the stream promised
  }
  return 0;
}
