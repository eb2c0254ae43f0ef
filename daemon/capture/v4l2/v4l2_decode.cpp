#include "daemon/capture/v4l2/v4l2_decode.h"

#include <linux/videodev2.h>

#include "daemon/capture/picture/jpeg_frame.h"
#include "daemon/capture/v4l2/v4l2_devices.h"

namespace vigil {

namespace {

bool isJpeg(std::uint32_t pixelFormat) {
  return pixelFormat == V4L2_PIX_FMT_MJPEG || pixelFormat == V4L2_PIX_FMT_JPEG;
}

Expected<void> checkYuyvFrame(std::span<const std::uint8_t> data, int width, int height,
                              std::size_t bytesPerLine) {
  if (width <= 0 || height <= 0 || width % 2 != 0 ||
      bytesPerLine < static_cast<std::size_t>(width) * 2) {
    return makeError(ErrorCode::kInvalidArgument, "YUYV frame of unusable size {}x{}", width,
                     height);
  }
  const std::size_t needed =
      bytesPerLine * static_cast<std::size_t>(height - 1) + static_cast<std::size_t>(width) * 2;
  if (data.size() < needed) {
    return makeError(ErrorCode::kInvalidData,
                     "corrupt frame: {} bytes, a {}x{} YUYV picture needs {}", data.size(), width,
                     height, needed);
  }
  return {};
}

}  // namespace

Expected<void> captureV4l2Frame(std::uint32_t pixelFormat, std::span<const std::uint8_t> data,
                                int width, int height, std::size_t bytesPerLine,
                                CapturedPicture& out) {
  if (isJpeg(pixelFormat)) {
    if (auto checked = checkJpegFrame(data, width, height); !checked) {
      out.clear();
      return checked;
    }
    out.setJpeg(data, cv::Size(width, height));
    return {};
  }
  if (pixelFormat == V4L2_PIX_FMT_YUYV) {
    if (auto checked = checkYuyvFrame(data, width, height, bytesPerLine); !checked) {
      out.clear();
      return checked;
    }
    out.setYuyv(data, cv::Size(width, height), bytesPerLine);
    return {};
  }
  out.clear();
  return makeError(ErrorCode::kUnsupported, "pixel format {} is not supported",
                   fourccToString(pixelFormat));
}

Expected<void> decodeV4l2Frame(std::uint32_t pixelFormat, std::span<const std::uint8_t> data,
                               int width, int height, std::size_t bytesPerLine, cv::Mat& out) {
  CapturedPicture picture;
  if (auto captured = captureV4l2Frame(pixelFormat, data, width, height, bytesPerLine, picture);
      !captured) {
    return captured;
  }
  auto pixels = picture.bgr();
  if (!pixels) return tl::unexpected(pixels.error());
  pixels->copyTo(out);
  return {};
}

}  // namespace vigil
