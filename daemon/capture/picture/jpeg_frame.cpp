#include "daemon/capture/picture/jpeg_frame.h"

// jpeglib.h needs FILE and size_t declared before it.
#include <cstdio>
// clang-format off
#include <jpeglib.h>
#include <jerror.h>
// clang-format on

#include <algorithm>
#include <csetjmp>
#include <exception>

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

static_assert(JpegMessages::kTextLength == JMSG_LENGTH_MAX, "format_message writes this much");

// libjpeg's error manager, extended: where error_exit jumps back to, and where messages go.
// `pub` first: libjpeg hands its callbacks cinfo->err, a pointer to it.
struct ErrorManager {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
  JpegMessages* messages;
};

JpegMessageKind kindOfWarning(int code) {
  switch (code) {
    case JWRN_EXTRANEOUS_DATA:
      return JpegMessageKind::kExtraneousBytes;
    case JWRN_JFIF_MAJOR:
    case JWRN_ADOBE_XFORM:
    case JWRN_BOGUS_ICC:
      return JpegMessageKind::kMetadata;
    case JWRN_HIT_MARKER:
    case JWRN_JPEG_EOF:
      return JpegMessageKind::kTruncated;
    default:  // bad Huffman or arithmetic code, must resync, bad scan parameters, ...
      return JpegMessageKind::kDamagedData;
  }
}

// Keeps the first message of each kind, formatted.
void keep(j_common_ptr cinfo, JpegMessageKind kind) {
  auto* manager = reinterpret_cast<ErrorManager*>(cinfo->err);
  const auto k = static_cast<std::size_t>(kind);
  if (manager->messages->said[k]) return;
  manager->messages->said[k] = true;
  (*cinfo->err->format_message)(cinfo, manager->messages->text[k].data());
}

// libjpeg gives up: back to runLibjpeg's setjmp (libjpeg's own way out; nothing on the way has
// a destructor).
[[noreturn]] void onError(j_common_ptr cinfo) {
  keep(cinfo, JpegMessageKind::kUndecodable);
  std::longjmp(reinterpret_cast<ErrorManager*>(cinfo->err)->jump, 1);
}

// A warning (level -1) or a trace message (0 and above, off at trace_level 0). A damaging
// warning ends the decode at once: the rest of the picture is not worth the CPU.
void onMessage(j_common_ptr cinfo, int level) {
  if (level >= 0) return;
  ++cinfo->err->num_warnings;
  const JpegMessageKind kind = kindOfWarning(cinfo->err->msg_code);
  keep(cinfo, kind);
  if (jpegMessageDamages(kind)) {
    std::longjmp(reinterpret_cast<ErrorManager*>(cinfo->err)->jump, 1);
  }
}

// libjpeg's default writes to standard error; every message is in JpegMessages instead.
void onOutput(j_common_ptr /*cinfo*/) {}

enum class Outcome { kDecoded, kRefused, kWrongSize };

// libjpeg's messages to `manager` (and through it to `messages`) instead of standard error,
// and its giving up to `manager.jump`.
void routeMessages(jpeg_decompress_struct& cinfo, ErrorManager& manager, JpegMessages& messages) {
  manager.messages = &messages;
  cinfo.err = jpeg_std_error(&manager.pub);
  manager.pub.error_exit = onError;
  manager.pub.emit_message = onMessage;
  manager.pub.output_message = onOutput;
}

// Reads the header and starts the decompression at 1/`reduction`, BGR or `grey`: true when the
// picture has the stream's size `full` and decodes to the size asked for; otherwise `decoded`
// gets the size libjpeg would have made.
bool startAtStreamSize(jpeg_decompress_struct& cinfo, cv::Size full, int reduction, bool grey,
                       cv::Size& decoded) {
  jpeg_read_header(&cinfo, TRUE);
  // checkJpegFrame read the header as libjpeg does; should they still differ, nothing of
  // another size is allocated.
  if (static_cast<int>(cinfo.image_width) != full.width ||
      static_cast<int>(cinfo.image_height) != full.height) {
    decoded = cv::Size(static_cast<int>(cinfo.image_width), static_cast<int>(cinfo.image_height));
    return false;
  }
  cinfo.scale_num = 1;
  cinfo.scale_denom = static_cast<unsigned int>(reduction);
  cinfo.out_color_space = grey ? JCS_GRAYSCALE : JCS_EXT_BGR;
  jpeg_start_decompress(&cinfo);
  const cv::Size made(static_cast<int>(cinfo.output_width), static_cast<int>(cinfo.output_height));
  if (made != jpegReducedSize(full, reduction) || cinfo.output_components != (grey ? 1 : 3)) {
    decoded = cv::Size(made.width * reduction, made.height * reduction);
    return false;
  }
  return true;
}

// The started decompression's rows into `rows` (`step` bytes apart), or with `crop` only its
// rows and the columns around it (runLibjpeg says how); false when libjpeg gives no row.
bool readRows(jpeg_decompress_struct& cinfo, std::uint8_t* rows, std::size_t step,
              const cv::Rect* crop, JDIMENSION* cropX) {
  JDIMENSION first = 0;
  JDIMENSION last = cinfo.output_height;
  if (crop != nullptr) {
    *cropX = static_cast<JDIMENSION>(crop->x);
    auto width = static_cast<JDIMENSION>(crop->width);
    jpeg_crop_scanline(&cinfo, cropX, &width);
    first = static_cast<JDIMENSION>(crop->y);
    last = first + static_cast<JDIMENSION>(crop->height);
    jpeg_skip_scanlines(&cinfo, first);
  }
  constexpr JDIMENSION kRowsAtOnce = 16;
  JSAMPROW at[kRowsAtOnce];
  while (cinfo.output_scanline < last) {
    const JDIMENSION n = std::min(kRowsAtOnce, last - cinfo.output_scanline);
    for (JDIMENSION i = 0; i < n; ++i) at[i] = rows + (cinfo.output_scanline - first + i) * step;
    if (jpeg_read_scanlines(&cinfo, at, n) == 0) return false;  // a memory source never suspends
  }
  // The rows below: skipped but the last, which is read (into the row after the crop's): a skip
  // to the very end would not decode the rest at all (libjpeg-turbo marks the end reached), and
  // damage there would go unsaid.
  if (cinfo.output_scanline < cinfo.output_height) {
    jpeg_skip_scanlines(&cinfo, cinfo.output_height - cinfo.output_scanline - 1);
    at[0] = rows + static_cast<std::size_t>(last - first) * step;
    if (jpeg_read_scanlines(&cinfo, at, 1) == 0) return false;
  }
  return true;
}

// libjpeg over `data` into `rows` (`expected`'s size, `step` bytes apart). C only between the
// setjmp and the end: a longjmp skips destructors, so nothing here nor in the functions it calls
// has one, and the setjmp stays here, in the frame that outlives them. `decoded` gets the size
// libjpeg would have made, when it is not `expected`.
// With `crop` (a rectangle of the output), only its rows are made and only the columns around
// it (jpeg_crop_scanline widens them to whole iMCUs, from `cropX` on: `rows` must hold 64 more
// columns than the crop, and one more row); the rows above and below are skipped
// (jpeg_skip_scanlines: entropy decoded, so every message libjpeg has of the picture is still
// said, but neither transformed nor converted).
Outcome runLibjpeg(std::span<const std::uint8_t> data, cv::Size full, int reduction, bool grey,
                   std::uint8_t* rows, std::size_t step, JpegMessages& messages, cv::Size& decoded,
                   const cv::Rect* crop = nullptr, JDIMENSION* cropX = nullptr) {
  jpeg_decompress_struct cinfo{};
  ErrorManager manager{};
  routeMessages(cinfo, manager, messages);
  if (setjmp(manager.jump) != 0) {
    jpeg_destroy_decompress(&cinfo);
    return Outcome::kRefused;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data.data(), static_cast<unsigned long>(data.size()));
  if (!startAtStreamSize(cinfo, full, reduction, grey, decoded)) {
    jpeg_destroy_decompress(&cinfo);
    return Outcome::kWrongSize;
  }
  if (!readRows(cinfo, rows, step, crop, cropX)) {
    jpeg_destroy_decompress(&cinfo);
    return Outcome::kRefused;
  }
  // Reads on to the end marker: stray bytes before it are said only here.
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return Outcome::kDecoded;
}

// The message that says why a refused picture is corrupt: its first damaging one.
std::string_view refusal(const JpegMessages& messages) {
  for (JpegMessageKind kind : {JpegMessageKind::kUndecodable, JpegMessageKind::kDamagedData,
                               JpegMessageKind::kTruncated}) {
    if (messages.said[static_cast<std::size_t>(kind)]) return messages.textOf(kind);
  }
  return "JPEG does not decode";
}

// The corrupt frame a decode that did not give a picture (`outcome`) is; `decoded`: the size
// libjpeg would have made, for kWrongSize.
Expected<void> refused(Outcome outcome, cv::Size decoded, cv::Size full,
                       const JpegMessages& messages) {
  if (outcome == Outcome::kWrongSize) {
    return makeError(ErrorCode::kInvalidData,
                     "corrupt frame: JPEG decodes to {}x{}, the stream is {}x{}", decoded.width,
                     decoded.height, full.width, full.height);
  }
  return makeError(ErrorCode::kInvalidData, "corrupt frame: {}", refusal(messages));
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

std::string_view jpegMessageKindName(JpegMessageKind kind) {
  switch (kind) {
    case JpegMessageKind::kExtraneousBytes:
      return "extraneous_bytes";
    case JpegMessageKind::kMetadata:
      return "metadata";
    case JpegMessageKind::kTruncated:
      return "truncated";
    case JpegMessageKind::kDamagedData:
      return "damaged_data";
    case JpegMessageKind::kUndecodable:
      break;
  }
  return "undecodable";
}

bool jpegMessageDamages(JpegMessageKind kind) {
  return kind != JpegMessageKind::kExtraneousBytes && kind != JpegMessageKind::kMetadata;
}

bool JpegMessages::saidAny() const {
  return std::find(said.begin(), said.end(), true) != said.end();
}

bool JpegMessages::damaged() const {
  for (std::size_t k = 0; k < kJpegMessageKinds; ++k) {
    if (said[k] && jpegMessageDamages(static_cast<JpegMessageKind>(k))) return true;
  }
  return false;
}

Expected<void> decodeJpeg(std::span<const std::uint8_t> data, cv::Size full, int reduction,
                          bool grey, cv::Mat& out, JpegMessages& messages) {
  messages = {};
  if (reduction != 1 && reduction != 2 && reduction != 4 && reduction != 8) {
    return makeError(ErrorCode::kInvalidArgument, "JPEG reduction 1/{}: only 1, 2, 4 and 8",
                     reduction);
  }
  try {
    out.create(jpegReducedSize(full, reduction), grey ? CV_8UC1 : CV_8UC3);  // reused if same
  } catch (const std::exception& e) {  // cv::Exception: out of memory
    return makeError(ErrorCode::kInvalidData, "corrupt frame: {}", e.what());
  }
  cv::Size decoded;
  const Outcome outcome =
      runLibjpeg(data, full, reduction, grey, out.data, out.step, messages, decoded);
  if (outcome == Outcome::kDecoded) return {};
  out.release();  // what was decoded before the damage is no picture
  return refused(outcome, decoded, full, messages);
}

Expected<void> decodeJpegRegion(std::span<const std::uint8_t> data, cv::Size full, cv::Rect region,
                                cv::Mat& out, cv::Mat& scratch, JpegMessages& messages) {
  messages = {};
  region &= cv::Rect({}, full);
  if (region.empty()) {
    return makeError(ErrorCode::kInvalidArgument, "JPEG region outside the picture");
  }
  // Decoded with a border: the chroma upsampling of a row or column reads its neighbours, and
  // at the edge of what is decoded they are not there. The border's pixels are left out.
  constexpr int kBorder = 16;
  const cv::Rect decoded = cv::Rect(region.x - kBorder, region.y - kBorder,
                                    region.width + 2 * kBorder, region.height + 2 * kBorder) &
                           cv::Rect({}, full);
  // jpeg_crop_scanline starts the columns at an iMCU (at most 32 pixels) to the left and ends
  // them at one to the right.
  constexpr int kWidest = 64;
  try {
    scratch.create(decoded.height + 1, std::min(full.width, decoded.width + kWidest), CV_8UC3);
  } catch (const std::exception& e) {  // cv::Exception: out of memory
    return makeError(ErrorCode::kInvalidData, "corrupt frame: {}", e.what());
  }
  cv::Size wrongSize;
  JDIMENSION cropX = 0;
  const Outcome outcome = runLibjpeg(data, full, 1, false, scratch.data, scratch.step, messages,
                                     wrongSize, &decoded, &cropX);
  if (outcome != Outcome::kDecoded) return refused(outcome, wrongSize, full, messages);
  scratch(cv::Rect(region.x - static_cast<int>(cropX), region.y - decoded.y, region.width,
                   region.height))
      .copyTo(out);
  return {};
}

}  // namespace vigil
