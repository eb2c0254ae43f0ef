#include "daemon/capture/v4l2_decode.h"

#include <linux/videodev2.h>

#include <exception>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <optional>

#include "daemon/capture/v4l2_devices.h"

namespace vigil {

namespace {

bool isJpeg(std::uint32_t pixelFormat) {
  return pixelFormat == V4L2_PIX_FMT_MJPEG || pixelFormat == V4L2_PIX_FMT_JPEG;
}

// Trailing padding after the end-of-image marker is legal (some webcams zero-fill the rest of
// the buffer), so skip zeros and look for FF D9 near the end.
bool hasJpegEnd(std::span<const std::uint8_t> data) {
  std::size_t end = data.size();
  while (end > 0 && data[end - 1] == 0) --end;
  const std::size_t from = end > 64 ? end - 64 : 0;
  for (std::size_t i = end; i >= from + 2; --i) {
    if (data[i - 2] == 0xFF && data[i - 1] == 0xD9) return true;
  }
  return false;
}

// The picture size a JPEG's frame header (SOF0..SOF15) declares, or nullopt when there is none
// before the scan. Reads the markers the way libjpeg's marker reader does (jdmarker.c: next_marker
// and read_markers), so that the header checked here is the one the decoder will use: bytes
// between segments that start no marker are skipped (libjpeg warns "extraneous bytes"), as are
// FF fill bytes and a stuffed FF 00; RSTn and TEM stand alone without a length; every other
// marker carries its segment's length. Reading an RST's next two bytes as a length would hop
// over the decoder's header to another one further on.
std::optional<cv::Size> jpegDeclaredSize(std::span<const std::uint8_t> data) {
  std::size_t i = 2;  // after FF D8
  while (true) {
    while (i < data.size() && data[i] != 0xFF) ++i;
    while (i < data.size() && data[i] == 0xFF) ++i;
    if (i >= data.size()) return std::nullopt;
    const std::uint8_t marker = data[i++];
    if (marker == 0x00) continue;                                        // FF 00: not a marker
    if ((marker >= 0xD0 && marker <= 0xD7) || marker == 0x01) continue;  // RSTn, TEM
    // A second SOI (libjpeg refuses it), or scan data or the end before any frame header.
    if (marker == 0xD8 || marker == 0xDA || marker == 0xD9) return std::nullopt;
    if (i + 2 > data.size()) return std::nullopt;
    const std::size_t length = (std::size_t{data[i]} << 8) | data[i + 1];
    if (length < 2) return std::nullopt;
    const bool frameHeader =
        marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
    if (frameHeader) {
      // length, precision, height, width
      if (length < 7 || i + 7 > data.size()) return std::nullopt;
      const int height = (data[i + 3] << 8) | data[i + 4];
      const int width = (data[i + 5] << 8) | data[i + 6];
      return cv::Size(width, height);
    }
    i += length;
  }
}

// Colours no camera picture will have in both corners at once (see decodeJpegFrame).
const cv::Vec3b kMarkFirst(0x5A, 0xA5, 0x3C);
const cv::Vec3b kMarkLast(0xC3, 0x5A, 0xA5);

void markCorners(cv::Mat& image) {
  image.at<cv::Vec3b>(0, 0) = kMarkFirst;
  image.at<cv::Vec3b>(image.rows - 1, image.cols - 1) = kMarkLast;
}

bool cornersMarked(const cv::Mat& image) {
  return image.at<cv::Vec3b>(0, 0) == kMarkFirst &&
         image.at<cv::Vec3b>(image.rows - 1, image.cols - 1) == kMarkLast;
}

// What can be told of a JPEG before decoding it: its markers, and the size its header declares.
Expected<void> checkJpegFrame(std::span<const std::uint8_t> data, int width, int height) {
  // Check the markers ourselves: OpenCV decodes a cut-off JPEG into a picture with a grey
  // bottom, and finds no decoder for bytes that do not start FF D8 FF.
  if (data.size() < 4 || data[0] != 0xFF || data[1] != 0xD8 || data[2] != 0xFF) {
    return makeError(ErrorCode::kInvalidData, "corrupt frame: no JPEG start marker");
  }
  if (!hasJpegEnd(data)) {
    return makeError(ErrorCode::kInvalidData,
                     "corrupt frame: JPEG cut short (no end marker, {} bytes)", data.size());
  }
  // A damaged header can declare any size, and the decoder would allocate it (up to 2^30
  // pixels) before finding the rest broken. The stream's negotiated size is the only one a
  // frame of it may have.
  const auto declared = jpegDeclaredSize(data);
  if (!declared) {
    return makeError(ErrorCode::kInvalidData, "corrupt frame: no JPEG frame header");
  }
  if (declared->width != width || declared->height != height) {
    return makeError(ErrorCode::kInvalidData, "corrupt frame: JPEG says {}x{}, the stream is {}x{}",
                     declared->width, declared->height, width, height);
  }
  return {};
}

// May throw what OpenCV throws; decodeV4l2Frame catches it.
Expected<void> decodeJpegFrame(std::span<const std::uint8_t> data, int width, int height,
                               cv::Mat& out) {
  if (auto checked = checkJpegFrame(data, width, height); !checked) return checked;
  // When the JPEG header does not parse, imdecode returns without touching `out` and
  // without saying so, which would deliver the previous picture again as a new frame. A
  // decode writes every pixel, so two marked corners that survive mean nothing was decoded.
  const bool marked = !out.empty() && out.type() == CV_8UC3;
  const uchar* storage = out.data;
  const cv::Size size = out.size();
  if (marked) markCorners(out);
  // A header over the driver's buffer: no copy. The Mat* overload decodes into `out`'s
  // storage when the size is unchanged. Webcams write no EXIF orientation, and honouring
  // one would rotate into a new allocation.
  const cv::Mat encoded(1, static_cast<int>(data.size()), CV_8UC1,
                        const_cast<std::uint8_t*>(data.data()));
  cv::imdecode(encoded, cv::IMREAD_COLOR | cv::IMREAD_IGNORE_ORIENTATION, &out);
  if (out.empty() || out.type() != CV_8UC3 ||
      (marked && out.data == storage && out.size() == size && cornersMarked(out))) {
    return makeError(ErrorCode::kInvalidData, "corrupt frame: JPEG does not decode");
  }
  // Should the header read above ever differ from the decoder's, a picture of another size
  // is still not a frame of this stream.
  if (out.cols != width || out.rows != height) {
    return makeError(ErrorCode::kInvalidData,
                     "corrupt frame: JPEG decoded to {}x{}, the stream is {}x{}", out.cols,
                     out.rows, width, height);
  }
  return {};
}

// May throw what OpenCV throws; decodeV4l2Frame catches it.
Expected<void> decodeYuyvFrame(std::span<const std::uint8_t> data, int width, int height,
                               std::size_t bytesPerLine, cv::Mat& out) {
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
  const cv::Mat yuyv(height, width, CV_8UC2, const_cast<std::uint8_t*>(data.data()), bytesPerLine);
  out.create(height, width, CV_8UC3);
  cv::cvtColor(yuyv, out, cv::COLOR_YUV2BGR_YUYV);
  return {};
}

}  // namespace

Expected<void> decodeV4l2Frame(std::uint32_t pixelFormat, std::span<const std::uint8_t> data,
                               int width, int height, std::size_t bytesPerLine, cv::Mat& out) {
  try {
    if (isJpeg(pixelFormat)) return decodeJpegFrame(data, width, height, out);
    if (pixelFormat == V4L2_PIX_FMT_YUYV) {
      return decodeYuyvFrame(data, width, height, bytesPerLine, out);
    }
  } catch (const std::exception& e) {  // cv::Exception and anything else OpenCV throws
    return makeError(ErrorCode::kInvalidData, "corrupt frame: {}", e.what());
  }
  return makeError(ErrorCode::kUnsupported, "pixel format {} is not supported",
                   fourccToString(pixelFormat));
}

}  // namespace vigil
