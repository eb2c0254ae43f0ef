#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <opencv2/core.hpp>
#include <optional>
#include <span>
#include <string_view>

#include "daemon/base/error.h"

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

// What libjpeg says of a picture while decoding it, in a few kinds. Not every warning means
// damage: UVC webcams put stray bytes before the end marker of every good picture.
enum class JpegMessageKind : std::uint8_t {
  kExtraneousBytes,  // "N extraneous bytes before marker": bytes between segments; harmless
  kMetadata,     // an unknown JFIF revision or Adobe transform, a bad ICC marker; pixels unharmed
  kTruncated,    // the compressed data ends early ("premature end of data segment", "of file")
  kDamagedData,  // the compressed data is damaged ("bad Huffman code", resync, bad parameters)
  kUndecodable,  // libjpeg gave up: an error, not a warning
};
inline constexpr std::size_t kJpegMessageKinds = 5;

// The kind's name in metrics and logs: "extraneous_bytes", "metadata", "truncated",
// "damaged_data", "undecodable".
std::string_view jpegMessageKindName(JpegMessageKind kind);
// Whether a picture of which libjpeg said this is damaged (not to be detected on nor shown).
bool jpegMessageDamages(JpegMessageKind kind);

// What libjpeg said while decoding one picture: which kinds, and the first message of each,
// formatted as libjpeg formats it (its format_message, at most JMSG_LENGTH_MAX bytes). Fixed
// storage: a decode allocates nothing for it.
struct JpegMessages {
  static constexpr std::size_t kTextLength = 200;  // JMSG_LENGTH_MAX
  std::array<bool, kJpegMessageKinds> said{};
  std::array<std::array<char, kTextLength>, kJpegMessageKinds> text{};

  bool saidAny() const;
  bool damaged() const;  // any kind that jpegMessageDamages
  std::string_view textOf(JpegMessageKind kind) const {
    return text[static_cast<std::size_t>(kind)].data();
  }
};

// Decodes a checked JPEG of `full` size at 1/`reduction` (1, 2, 4 or 8: libjpeg's scaled IDCT,
// the size rounded up as libjpeg does) into `out`, BGR or grey, reusing `out`'s storage when its
// size is unchanged. libjpeg(-turbo) is called directly, with an error manager of its own: none
// of libjpeg's messages reaches standard error; they are in `messages` for the caller, who knows
// the camera, to count and log. A picture whose decode says its data is damaged or cut short
// (jpegMessageDamages) is corrupt, as one libjpeg gives up on: decoding stops at the first such
// message (TurboJPEG's stop-on-warning), and the result is kInvalidData "corrupt frame: ..."
// with `out` then holding no picture (never the previous one again). Harmless warnings (stray
// bytes before a marker) are in `messages` and the picture is used.
Expected<void> decodeJpeg(std::span<const std::uint8_t> data, cv::Size full, int reduction,
                          bool grey, cv::Mat& out, JpegMessages& messages);

// The BGR pixels of `region` of a checked JPEG of `full` size, at full resolution, into `out`:
// only the rows of the region are transformed and converted, and only the columns around it
// (libjpeg-turbo's jpeg_skip_scanlines and jpeg_crop_scanline); the rest is entropy decoded
// only, so the verdict (`messages`, a refusal) is the whole picture's, as decodeJpeg's.
// `scratch` is reused storage. The pixels are those of the full decode's region.
Expected<void> decodeJpegRegion(std::span<const std::uint8_t> data, cv::Size full, cv::Rect region,
                                cv::Mat& out, cv::Mat& scratch, JpegMessages& messages);

}  // namespace vigil
