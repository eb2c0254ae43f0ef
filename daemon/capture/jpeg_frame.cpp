#include "daemon/capture/jpeg_frame.h"

#include <exception>
#include <opencv2/imgcodecs.hpp>

namespace vigil {

namespace {

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

// Marks no camera picture will have in both corners at once (see decodeJpeg).
const cv::Vec3b kMarkFirst(0x5A, 0xA5, 0x3C);
const cv::Vec3b kMarkLast(0xC3, 0x5A, 0xA5);
constexpr std::uint8_t kGreyMarkFirst = 0x5A;
constexpr std::uint8_t kGreyMarkLast = 0xA5;

void markCorners(cv::Mat& image) {
  if (image.type() == CV_8UC3) {
    image.at<cv::Vec3b>(0, 0) = kMarkFirst;
    image.at<cv::Vec3b>(image.rows - 1, image.cols - 1) = kMarkLast;
  } else {
    image.at<std::uint8_t>(0, 0) = kGreyMarkFirst;
    image.at<std::uint8_t>(image.rows - 1, image.cols - 1) = kGreyMarkLast;
  }
}

bool cornersMarked(const cv::Mat& image) {
  if (image.type() == CV_8UC3) {
    return image.at<cv::Vec3b>(0, 0) == kMarkFirst &&
           image.at<cv::Vec3b>(image.rows - 1, image.cols - 1) == kMarkLast;
  }
  return image.at<std::uint8_t>(0, 0) == kGreyMarkFirst &&
         image.at<std::uint8_t>(image.rows - 1, image.cols - 1) == kGreyMarkLast;
}

int readFlags(int reduction, bool grey) {
  int flags = grey ? cv::IMREAD_GRAYSCALE : cv::IMREAD_COLOR;
  switch (reduction) {
    case 2:
      flags = grey ? cv::IMREAD_REDUCED_GRAYSCALE_2 : cv::IMREAD_REDUCED_COLOR_2;
      break;
    case 4:
      flags = grey ? cv::IMREAD_REDUCED_GRAYSCALE_4 : cv::IMREAD_REDUCED_COLOR_4;
      break;
    case 8:
      flags = grey ? cv::IMREAD_REDUCED_GRAYSCALE_8 : cv::IMREAD_REDUCED_COLOR_8;
      break;
    default:
      break;
  }
  // Webcams write no EXIF orientation, and honouring one would rotate into a new allocation.
  return flags | cv::IMREAD_IGNORE_ORIENTATION;
}

}  // namespace

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

cv::Size jpegReducedSize(cv::Size full, int reduction) {
  return {(full.width + reduction - 1) / reduction, (full.height + reduction - 1) / reduction};
}

Expected<void> decodeJpeg(std::span<const std::uint8_t> data, cv::Size full, int reduction,
                          bool grey, cv::Mat& out) {
  if (reduction != 1 && reduction != 2 && reduction != 4 && reduction != 8) {
    return makeError(ErrorCode::kInvalidArgument, "JPEG reduction 1/{}: only 1, 2, 4 and 8",
                     reduction);
  }
  const cv::Size expected = jpegReducedSize(full, reduction);
  const int type = grey ? CV_8UC1 : CV_8UC3;
  try {
    // When the JPEG header does not parse, imdecode returns without touching `out` and
    // without saying so, which would deliver the previous picture again as a new frame. A
    // decode writes every pixel, so two marked corners that survive mean nothing was decoded.
    const bool marked = !out.empty() && out.type() == type;
    const uchar* storage = out.data;
    const cv::Size size = out.size();
    if (marked) markCorners(out);
    // A header over the caller's bytes: no copy. The Mat* overload decodes into `out`'s
    // storage when the size is unchanged.
    const cv::Mat encoded(1, static_cast<int>(data.size()), CV_8UC1,
                          const_cast<std::uint8_t*>(data.data()));
    cv::imdecode(encoded, readFlags(reduction, grey), &out);
    if (out.empty() || out.type() != type ||
        (marked && out.data == storage && out.size() == size && cornersMarked(out))) {
      return makeError(ErrorCode::kInvalidData, "corrupt frame: JPEG does not decode");
    }
  } catch (const std::exception& e) {  // cv::Exception and anything else OpenCV throws
    return makeError(ErrorCode::kInvalidData, "corrupt frame: {}", e.what());
  }
  // Should the header read before differ from the decoder's, a picture of another size is
  // still not a frame of this stream.
  if (out.size() != expected) {
    return makeError(ErrorCode::kInvalidData,
                     "corrupt frame: JPEG decoded to {}x{}, the stream is {}x{}",
                     out.cols * reduction, out.rows * reduction, full.width, full.height);
  }
  return {};
}

}  // namespace vigil
