#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <opencv2/core.hpp>
#include <span>

#include "daemon/base/error.h"
#include "daemon/capture/picture/decode_account.h"

struct AVFrame;

namespace vigil {

// How a picture arrived from its source, before any pixel of it was decoded or converted.
enum class PictureForm {
  kNone,    // nothing yet (or cleared)
  kBgr,     // 8-bit BGR pixels already (tests, sources without a cheaper form)
  kJpeg,    // one JPEG (V4L2 MJPEG, an MJPEG network stream): decoded by libjpeg(-turbo)
  kYuyv,    // packed YUYV 4:2:2 (V4L2)
  kFfmpeg,  // a picture FFmpeg's decoder made (H.264, H.265, ...), held by reference
};

// Where a frame's bytes become pixels. A picture is kept as it arrived (the JPEG bytes, the raw
// YUYV buffer, FFmpeg's decoded picture by reference) and turned into pixels only when something
// takes it, at the size it asks for, once per size however many take it:
// - the detector asks for BGR covering its letterbox (a 1920x1080 JPEG decodes at 1/4 scale,
//   480x270, in about a third of the full decode's time; an FFmpeg picture is scaled in the same
//   pass as its colour conversion);
// - the motion gate asks for a small grey picture (a JPEG at 1/4 or 1/8 scale, FFmpeg's luma
//   plane, YUYV's Y samples: no colour conversion at all);
// - the status page and snapshots ask for the full size, only when shown.
// Ownership: owns its bytes and decoded copies, reused from picture to picture (a capture pool
// slot does not allocate in steady state); an FFmpeg picture's buffer is shared with FFmpeg by
// reference count.
// Threads: filled by one thread while nobody else uses it (the capture thread, before handing
// the frame off); bgr(), grey() and the accessors may then be called from several threads at
// once (a mutex guards the decoded copies). The Mats they return share the picture's storage
// and are valid until the picture is filled again.
// Failure: a picture whose bytes do not decode, or whose JPEG decode says its data is damaged
// or cut short, is kInvalidData "corrupt frame: ...", never the previous picture again; nothing
// throws. The first decode's verdict is the picture's: a refused picture is refused at every size
// without decoding again, and the verdict (with what libjpeg said, harmless or not) is reported
// once to the account it is billed to (DecodeAccount::report: counted, logged per camera).
class CapturedPicture {
 public:
  CapturedPicture();
  ~CapturedPicture();
  CapturedPicture(CapturedPicture&&) noexcept;
  CapturedPicture& operator=(CapturedPicture&&) noexcept;
  CapturedPicture(const CapturedPicture&) = delete;
  CapturedPicture& operator=(const CapturedPicture&) = delete;

  // Filling (the source's thread). Each forgets the previous picture and its decoded copies.
  // A JPEG of `size` (as its header declares; the caller checked it): the bytes are copied.
  void setJpeg(std::span<const std::uint8_t> bytes, cv::Size size);
  // YUYV of `size` with rows `bytesPerLine` apart: copied; the caller checked the length.
  void setYuyv(std::span<const std::uint8_t> bytes, cv::Size size, std::size_t bytesPerLine);
  // FFmpeg's picture: its reference moves here (`picture` is left empty, as av_frame_move_ref
  // leaves it).
  void takeFfmpeg(AVFrame* picture);
  // BGR pixels the caller writes into the returned Mat of `size` (its storage is reused).
  cv::Mat& bgrForWriting(cv::Size size);
  void clear();
  // What arrived in `other` (not its decoded copies): bytes copied into reused storage, an
  // FFmpeg picture by a new reference. For keeping a frame beyond its pool slot (the status
  // page's latest picture, an event's best frame) at the price of a copy of the compressed
  // bytes, not of the pixels.
  void assign(const CapturedPicture& other);

  PictureForm form() const;
  bool empty() const { return form() == PictureForm::kNone; }
  cv::Size size() const;  // the full size

  // 8-bit BGR at the smallest size this form decodes to cheaply whose width and height are
  // both at least `atLeast`'s (an empty `atLeast`: the full size). The aspect ratio is the full
  // picture's; the returned size may be larger than asked, never larger than the full size.
  Expected<cv::Mat> bgr(cv::Size atLeast = {}) const;
  // 8-bit BGR of `region` of the picture (its full-size pixels, clipped to the picture), at full
  // resolution, made for this call and not kept: a JPEG has only the region's rows and the
  // columns around it decoded (decodeJpegRegion; the verdict still the whole picture's), an
  // FFmpeg picture only the region converted; other forms the full picture's view. For
  // detection regions (detector/regions.h).
  Expected<cv::Mat> bgrRegion(cv::Rect region) const;
  // 8-bit grey at least `minWidth` wide (or the full width when that is smaller).
  Expected<cv::Mat> grey(int minWidth) const;

  // Decodes and conversions done since this picture was filled (any size, BGR or grey); each
  // size is decoded once however often it is asked for.
  std::uint64_t decodes() const;

  // The camera this picture's decoding is billed to (kept by assign()); nullptr: nobody.
  void billTo(const std::shared_ptr<DecodeAccount>& account);
  // Called once by a camera's capture thread: decoding on it is not billed as "elsewhere".
  static void markCaptureThread();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The size a picture of `full` has after the YOLOX letterbox into `input` (r = min(W/w, H/h)),
// rounded up: what the detector needs of it, for CapturedPicture::bgr().
cv::Size letterboxCovering(cv::Size full, cv::Size input);

// The scale, 1, 2, 4 or 8 (libjpeg's SIMD-accelerated reductions), at which a JPEG of `full`
// still covers `atLeast` (libjpeg rounds the reduced size up). 1 when `atLeast` is empty.
int jpegReduction(cv::Size full, cv::Size atLeast);

}  // namespace vigil
