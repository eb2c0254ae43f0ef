#include "daemon/capture/picture/captured_picture.h"

extern "C" {
#include <libavutil/frame.h>
#include <libavutil/hwcontext.h>
#include <libavutil/pixfmt.h>
#include <libswscale/swscale.h>
}

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <mutex>
#include <opencv2/imgproc.hpp>
#include <optional>
#include <vector>

#include "daemon/capture/picture/jpeg_frame.h"
#include "daemon/capture/picture/thread_cpu.h"

namespace vigil {

namespace {

// The formats whose first plane is 8-bit luma: grey for free.
bool lumaFirst(int format) {
  switch (static_cast<AVPixelFormat>(format)) {
    case AV_PIX_FMT_YUV420P:
    case AV_PIX_FMT_YUVJ420P:
    case AV_PIX_FMT_YUV422P:
    case AV_PIX_FMT_YUVJ422P:
    case AV_PIX_FMT_YUV444P:
    case AV_PIX_FMT_YUVJ444P:
    case AV_PIX_FMT_YUV440P:
    case AV_PIX_FMT_YUVJ440P:
    case AV_PIX_FMT_YUV411P:
    case AV_PIX_FMT_NV12:
    case AV_PIX_FMT_NV21:
    case AV_PIX_FMT_GRAY8:
      return true;
    default:
      return false;
  }
}

// The size of `full` scaled down, aspect kept, until it just covers `atLeast`.
cv::Size coveringSize(cv::Size full, cv::Size atLeast) {
  if (atLeast.empty() || full.empty()) return full;
  const double f = std::max(static_cast<double>(atLeast.width) / full.width,
                            static_cast<double>(atLeast.height) / full.height);
  if (f >= 1) return full;
  return {std::min(full.width, static_cast<int>(std::ceil(full.width * f - 1e-9))),
          std::min(full.height, static_cast<int>(std::ceil(full.height * f - 1e-9)))};
}

thread_local bool tlCaptureThread = false;

// A conversion, with what OpenCV throws as a corrupt frame.
template <typename Make>
Expected<void> makeSafely(Make make) {
  try {
    return make();
  } catch (const std::exception& e) {
    return makeError(ErrorCode::kInvalidData, "corrupt frame: {}", e.what());
  }
}

}  // namespace

struct CapturedPicture::State {
  // A decoded copy of the picture at one size, reused from picture to picture.
  struct DecodedCopy {
    cv::Mat pixels;
    bool valid = false;

    // The storage to decode into: a Mat someone still holds (a taker of an earlier size) is let go
    // rather than overwritten under them.
    cv::Mat& target() {
      // Another thread may let go of its copy meanwhile (OpenCV counts atomically).
      if (pixels.u != nullptr && std::atomic_ref<int>(pixels.u->refcount).load() > 1) {
        pixels.release();
      }
      valid = false;
      return pixels;
    }
  };

  // What arrived. Written only while nobody else uses the picture.
  PictureForm form = PictureForm::kNone;
  cv::Size size;
  std::vector<std::uint8_t> bytes;  // kJpeg, kYuyv
  std::size_t bytesPerLine = 0;     // kYuyv
  AVFrame* ffmpeg = nullptr;        // kFfmpeg (allocated on first use, then reused)
  AVFrame* downloaded = nullptr;    // a VAAPI picture's pixels, fetched from the GPU when taken
  bool isDownloaded = false;
  cv::Mat pixels;  // kBgr

  // What was made of it, on demand.
  mutable std::mutex mutex;
  DecodedCopy full;
  DecodedCopy reduced;
  DecodedCopy grey;
  cv::Mat scratch;  // a YUYV picture's colour, on the way to a reduced size
  SwsContext* scaler = nullptr;
  SwsContext* regionScaler = nullptr;  // regions' conversions, at sizes of their own
  cv::Mat regionScratch;               // a JPEG region's whole iMCU columns
  std::uint64_t decodes = 0;
  std::shared_ptr<DecodeAccount> account;
  bool frameBilled = false;  // this frame (or the one it is a copy of) is in account->frames
  // The first decode's verdict (kept by assign()): reported to the account, and a refusal
  // repeated to every later taker.
  bool judged = false;
  std::optional<Error> refused;
  JpegMessages jpegMessages;  // what libjpeg said of the latest JPEG decode

  // Bills one decode that started at `cpuBefore` (this thread's CPU clock).
  void billDecode(std::int64_t cpuBefore) {
    ++decodes;
    if (!account) return;
    if (!frameBilled) account->frames.fetch_add(1, std::memory_order_relaxed);
    frameBilled = true;
    if (!tlCaptureThread) {
      account->cpuNanosElsewhere.fetch_add(threadCpuNanos() - cpuBefore, std::memory_order_relaxed);
    }
  }

  // The outcome of a decode of this picture: the first is its verdict, reported to the account
  // with what libjpeg said; a later size that fails (never for a JPEG: libjpeg's verdict is the
  // same at every scale) refuses the picture from then on, and is reported too.
  Expected<void> judge(Expected<void> made) {
    const bool first = !judged;
    judged = true;
    if (made && !first) return made;
    if (!made) refused = made.error();
    if (account) {
      account->report(first && form == PictureForm::kJpeg ? &jpegMessages : nullptr,
                      made ? nullptr : &made.error());
    }
    return made;
  }

  ~State() {
    sws_freeContext(scaler);
    sws_freeContext(regionScaler);
    av_frame_free(&ffmpeg);
    av_frame_free(&downloaded);
  }

  void forget() {
    full.valid = reduced.valid = grey.valid = false;
    decodes = 0;
    frameBilled = false;
    judged = false;
    refused.reset();
    isDownloaded = false;
    if (downloaded != nullptr) av_frame_unref(downloaded);
    if (ffmpeg != nullptr) av_frame_unref(ffmpeg);
  }

  // The FFmpeg picture in main memory: itself, or a VAAPI picture downloaded from the GPU (once,
  // and only when something takes it).
  Expected<const AVFrame*> softwareFrame() {
    if (ffmpeg->hw_frames_ctx == nullptr) return ffmpeg;
    if (isDownloaded) return downloaded;
    if (downloaded == nullptr) downloaded = av_frame_alloc();
    if (downloaded == nullptr) return makeError(ErrorCode::kInvalidData, "out of memory");
    if (int rc = av_hwframe_transfer_data(downloaded, ffmpeg, 0); rc < 0) {
      return makeError(ErrorCode::kInvalidData,
                       "corrupt frame: cannot download the hardware-decoded picture ({})", rc);
    }
    isDownloaded = true;
    return downloaded;
  }

  // An FFmpeg picture converted, and scaled to `to`, in one pass of swscale.
  Expected<void> convertFfmpeg(cv::Size to, AVPixelFormat into, cv::Mat& out) {
    auto frame = softwareFrame();
    if (!frame) return tl::unexpected(frame.error());
    const AVFrame* f = *frame;
    const auto from = static_cast<AVPixelFormat>(f->format);
    scaler = sws_getCachedContext(scaler, f->width, f->height, from, to.width, to.height, into,
                                  SWS_BILINEAR, nullptr, nullptr, nullptr);
    if (scaler == nullptr) {
      return makeError(ErrorCode::kInvalidData, "corrupt frame: cannot convert a {}x{} {} picture",
                       f->width, f->height, static_cast<int>(from));
    }
    out.create(to, into == AV_PIX_FMT_GRAY8 ? CV_8UC1 : CV_8UC3);
    std::uint8_t* planes[] = {out.data};
    const int strides[] = {static_cast<int>(out.step)};
    sws_scale(scaler, f->data, f->linesize, 0, f->height, planes, strides);
    return {};
  }

  // The FFmpeg picture's `region` (even-aligned, inside it) converted to BGR at its own size.
  Expected<void> convertFfmpegRegion(cv::Rect region, cv::Mat& out) {
    auto frame = softwareFrame();
    if (!frame) return tl::unexpected(frame.error());
    AVFrame* cropped = av_frame_clone(*frame);
    if (cropped == nullptr) return makeError(ErrorCode::kInvalidData, "out of memory");
    cropped->crop_left = static_cast<std::size_t>(region.x);
    cropped->crop_top = static_cast<std::size_t>(region.y);
    cropped->crop_right = static_cast<std::size_t>(cropped->width - region.br().x);
    cropped->crop_bottom = static_cast<std::size_t>(cropped->height - region.br().y);
    const int rc = av_frame_apply_cropping(cropped, AV_FRAME_CROP_UNALIGNED);
    const auto from = static_cast<AVPixelFormat>(cropped->format);
    regionScaler = rc < 0
                       ? nullptr
                       : sws_getCachedContext(regionScaler, cropped->width, cropped->height, from,
                                              region.width, region.height, AV_PIX_FMT_BGR24,
                                              SWS_BILINEAR, nullptr, nullptr, nullptr);
    if (regionScaler == nullptr) {
      av_frame_free(&cropped);
      return makeError(ErrorCode::kInvalidData, "corrupt frame: cannot convert a {}x{} region",
                       region.width, region.height);
    }
    // swscale's SIMD converters write whole blocks of 8 or 16 pixels: a row as wide as the region
    // would be overrun past its end (the last row past the buffer's). Padded, then cut.
    constexpr int kBlock = 16;
    cv::Mat padded(region.height, (region.width + 2 * kBlock - 1) / kBlock * kBlock, CV_8UC3);
    std::uint8_t* planes[] = {padded.data};
    const int strides[] = {static_cast<int>(padded.step)};
    sws_scale(regionScaler, cropped->data, cropped->linesize, 0, cropped->height, planes, strides);
    av_frame_free(&cropped);
    out = padded(cv::Rect({}, region.size()));
    return {};
  }

  // BGR of this picture at `to` (a size its form makes cheaply), into `out`.
  Expected<void> makeBgr(cv::Size to, int reduction, cv::Mat& out) {
    switch (form) {
      case PictureForm::kJpeg:
        return decodeJpeg(bytes, size, reduction, false, out, jpegMessages);
      case PictureForm::kYuyv: {
        const cv::Mat yuyv(size, CV_8UC2, bytes.data(), bytesPerLine);
        if (to == size) {
          cv::cvtColor(yuyv, out, cv::COLOR_YUV2BGR_YUYV);
        } else {
          cv::cvtColor(yuyv, scratch, cv::COLOR_YUV2BGR_YUYV);
          cv::resize(scratch, out, to, 0, 0, cv::INTER_AREA);
        }
        return {};
      }
      case PictureForm::kFfmpeg:
        return convertFfmpeg(to, AV_PIX_FMT_BGR24, out);
      case PictureForm::kBgr:
      case PictureForm::kNone:
        break;
    }
    return makeError(ErrorCode::kInvalidData, "no picture");
  }

  Expected<void> makeGrey(int minWidth, cv::Mat& out) {
    const cv::Size small(
        std::min(size.width, minWidth),
        std::max(1,
                 static_cast<int>(std::lround(static_cast<double>(std::min(size.width, minWidth)) *
                                              size.height / size.width))));
    switch (form) {
      case PictureForm::kJpeg:
        return decodeJpeg(bytes, size, jpegReduction(size, cv::Size(small.width, 1)), true, out,
                          jpegMessages);
      case PictureForm::kYuyv: {
        const cv::Mat yuyv(size, CV_8UC2, bytes.data(), bytesPerLine);
        cv::extractChannel(yuyv, scratch, 0);  // Y: every other byte, no colour conversion
        cv::resize(scratch, out, small, 0, 0, cv::INTER_AREA);
        return {};
      }
      case PictureForm::kFfmpeg: {
        auto frame = softwareFrame();
        if (!frame) return tl::unexpected(frame.error());
        const AVFrame* f = *frame;
        if (lumaFirst(f->format)) {
          const cv::Mat luma(f->height, f->width, CV_8UC1, f->data[0],
                             static_cast<std::size_t>(f->linesize[0]));
          cv::resize(luma, out, small, 0, 0, cv::INTER_AREA);
          return {};
        }
        return convertFfmpeg(small, AV_PIX_FMT_GRAY8, out);
      }
      case PictureForm::kBgr:
        // As the motion check always did it: shrink, then drop the colour.
        cv::resize(pixels, scratch, small, 0, 0, cv::INTER_AREA);
        cv::cvtColor(scratch, out, cv::COLOR_BGR2GRAY);
        return {};
      case PictureForm::kNone:
        break;
    }
    return makeError(ErrorCode::kInvalidData, "no picture");
  }
};

CapturedPicture::CapturedPicture() : state_(std::make_unique<State>()) {}
CapturedPicture::~CapturedPicture() = default;
CapturedPicture::CapturedPicture(CapturedPicture&&) noexcept = default;
CapturedPicture& CapturedPicture::operator=(CapturedPicture&&) noexcept = default;

void CapturedPicture::setJpeg(std::span<const std::uint8_t> bytes, cv::Size size) {
  State& s = *state_;
  s.forget();
  s.bytes.assign(bytes.begin(), bytes.end());  // reuses the capacity
  s.size = size;
  s.form = PictureForm::kJpeg;
}

void CapturedPicture::setYuyv(std::span<const std::uint8_t> bytes, cv::Size size,
                              std::size_t bytesPerLine) {
  State& s = *state_;
  s.forget();
  s.bytes.assign(bytes.begin(), bytes.end());
  s.size = size;
  s.bytesPerLine = bytesPerLine;
  s.form = PictureForm::kYuyv;
}

void CapturedPicture::takeFfmpeg(AVFrame* picture) {
  State& s = *state_;
  s.forget();
  if (s.ffmpeg == nullptr) s.ffmpeg = av_frame_alloc();
  if (s.ffmpeg == nullptr) {  // out of memory: no picture rather than a wrong one
    av_frame_unref(picture);
    s.form = PictureForm::kNone;
    return;
  }
  av_frame_move_ref(s.ffmpeg, picture);
  s.size = cv::Size(s.ffmpeg->width, s.ffmpeg->height);
  s.form = PictureForm::kFfmpeg;
}

cv::Mat& CapturedPicture::bgrForWriting(cv::Size size) {
  State& s = *state_;
  s.forget();
  s.pixels.create(size, CV_8UC3);
  s.size = size;
  s.form = PictureForm::kBgr;
  return s.pixels;
}

void CapturedPicture::clear() {
  state_->forget();
  state_->form = PictureForm::kNone;
  state_->size = {};
}

void CapturedPicture::assign(const CapturedPicture& other) {
  if (&other == this) return;
  State& s = *state_;
  const State& o = *other.state_;
  s.forget();
  s.account = o.account;
  {
    std::lock_guard lock(o.mutex);
    s.frameBilled = o.frameBilled;
    s.judged = o.judged;
    s.refused = o.refused;
  }
  s.size = o.size;
  s.form = o.form;
  switch (o.form) {
    case PictureForm::kJpeg:
    case PictureForm::kYuyv:
      s.bytes.assign(o.bytes.begin(), o.bytes.end());
      s.bytesPerLine = o.bytesPerLine;
      break;
    case PictureForm::kFfmpeg:
      if (s.ffmpeg == nullptr) s.ffmpeg = av_frame_alloc();
      if (s.ffmpeg == nullptr || av_frame_ref(s.ffmpeg, o.ffmpeg) < 0) {
        s.form = PictureForm::kNone;
        s.size = {};
      }
      break;
    case PictureForm::kBgr:
      o.pixels.copyTo(s.pixels);
      break;
    case PictureForm::kNone:
      break;
  }
}

void CapturedPicture::billTo(const std::shared_ptr<DecodeAccount>& account) {
  if (state_->account != account) state_->account = account;
}

void CapturedPicture::markCaptureThread() { tlCaptureThread = true; }

PictureForm CapturedPicture::form() const { return state_->form; }

cv::Size CapturedPicture::size() const { return state_->size; }

std::uint64_t CapturedPicture::decodes() const {
  std::lock_guard lock(state_->mutex);
  return state_->decodes;
}

Expected<cv::Mat> CapturedPicture::bgr(cv::Size atLeast) const {
  State& s = *state_;
  if (s.form == PictureForm::kNone) return makeError(ErrorCode::kInvalidData, "no picture");
  if (s.form == PictureForm::kBgr) return s.pixels;
  int reduction = 1;
  cv::Size to = s.size;
  if (s.form == PictureForm::kJpeg) {
    reduction = jpegReduction(s.size, atLeast);
    to = jpegReducedSize(s.size, reduction);
  } else if (s.form == PictureForm::kFfmpeg) {
    to = coveringSize(s.size, atLeast);
  }
  std::lock_guard lock(s.mutex);
  if (s.refused) return tl::unexpected(*s.refused);
  State::DecodedCopy& copy = to == s.size ? s.full : s.reduced;
  if (copy.valid && copy.pixels.size() == to) return copy.pixels;
  const std::int64_t cpuBefore = threadCpuNanos();
  cv::Mat& out = copy.target();
  if (auto made = s.judge(makeSafely([&] { return s.makeBgr(to, reduction, out); })); !made) {
    return tl::unexpected(made.error());
  }
  copy.valid = true;
  s.billDecode(cpuBefore);
  return copy.pixels;
}

Expected<cv::Mat> CapturedPicture::bgrRegion(cv::Rect region) const {
  State& s = *state_;
  if (s.form == PictureForm::kNone) return makeError(ErrorCode::kInvalidData, "no picture");
  region &= cv::Rect({}, s.size);
  if (region.empty()) return makeError(ErrorCode::kInvalidArgument, "region outside the picture");
  if (s.form == PictureForm::kBgr) return s.pixels(region);
  if (s.form == PictureForm::kYuyv) {
    auto whole = bgr();
    if (!whole) return whole;
    return (*whole)(region);
  }
  std::lock_guard lock(s.mutex);
  if (s.refused) return tl::unexpected(*s.refused);
  const std::int64_t cpuBefore = threadCpuNanos();
  cv::Mat out;
  Expected<void> made;
  if (s.form == PictureForm::kJpeg) {
    made = s.judge(makeSafely([&] {
      return decodeJpegRegion(s.bytes, s.size, region, out, s.regionScratch, s.jpegMessages);
    }));
  } else {
    // Chroma is shared by 2x2 pixels: convert from even coordinates, then cut the region.
    const cv::Rect even(region.x & ~1, region.y & ~1, 0, 0);
    const cv::Rect aligned = cv::Rect(even.x, even.y, (region.br().x - even.x + 1) & ~1,
                                      (region.br().y - even.y + 1) & ~1) &
                             cv::Rect({}, s.size);
    cv::Mat converted;
    made = s.judge(makeSafely([&] { return s.convertFfmpegRegion(aligned, converted); }));
    if (made) out = converted(region - aligned.tl());
  }
  if (!made) return tl::unexpected(made.error());
  s.billDecode(cpuBefore);
  return out;
}

Expected<cv::Mat> CapturedPicture::grey(int minWidth) const {
  State& s = *state_;
  if (s.form == PictureForm::kNone) return makeError(ErrorCode::kInvalidData, "no picture");
  std::lock_guard lock(s.mutex);
  if (s.refused) return tl::unexpected(*s.refused);
  if (s.grey.valid && s.grey.pixels.cols >= std::min(minWidth, s.size.width)) {
    return s.grey.pixels;
  }
  const std::int64_t cpuBefore = threadCpuNanos();
  cv::Mat& out = s.grey.target();
  if (auto made = s.judge(makeSafely([&] { return s.makeGrey(std::max(1, minWidth), out); }));
      !made) {
    return tl::unexpected(made.error());
  }
  s.grey.valid = true;
  s.billDecode(cpuBefore);
  return s.grey.pixels;
}

cv::Size letterboxCovering(cv::Size full, cv::Size input) {
  if (full.empty() || input.empty()) return full;
  const double r = std::min(static_cast<double>(input.width) / full.width,
                            static_cast<double>(input.height) / full.height);
  return {static_cast<int>(std::ceil(full.width * r - 1e-9)),
          static_cast<int>(std::ceil(full.height * r - 1e-9))};
}

int jpegReduction(cv::Size full, cv::Size atLeast) {
  if (atLeast.empty()) return 1;
  int reduction = 8;
  while (reduction > 1) {
    const cv::Size reduced = jpegReducedSize(full, reduction);
    if (reduced.width >= atLeast.width && reduced.height >= atLeast.height) break;
    reduction /= 2;
  }
  return reduction;
}

}  // namespace vigil
