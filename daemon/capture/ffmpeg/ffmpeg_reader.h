#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>

#include "daemon/base/error.h"
#include "daemon/capture/ffmpeg/delivered_pictures.h"
#include "daemon/capture/ffmpeg/ffmpeg_deadline.h"
#include "daemon/capture/ffmpeg/ffmpeg_decoding.h"
#include "daemon/capture/frame/frame_source.h"
#include "daemon/capture/picture/captured_picture.h"
#include "daemon/settings/settings.h"

struct AVFormatContext;
struct AVPacket;

namespace vigil {

// One video read with FFmpeg's libavformat and libavcodec directly, for network streams and
// files: open and read are bounded by deadlines, and interrupt() ends either at once, from any
// thread, through FFmpeg's interrupt callback.
// What a read delivers is the picture as it arrived, not pixels (CapturedPicture): a JPEG of an
// MJPEG stream as its bytes (not decoded at all unless taken, and then at the size needed), any
// other codec's picture decoded by FFmpeg (H.264 and H.265 pictures depend on each other, so
// every packet is decoded) and kept by reference, colour-converted only when taken.
// Ownership and threads: as FrameSource (one capture thread; interrupt() from any).
// Failure: open() and read() return kUnavailable when the video cannot be read (refused, gone,
// nothing before the deadline, interrupted), kEndOfStream at its end (the decoder's last
// pictures delivered first), and kInvalidData for a picture that is lost but the video goes on
// (a corrupt packet, a JPEG cut short); never throw. A read that only skips pictures (keyframes
// only, or resuming) returns kTimeout once its `timeout` has passed with packets still coming.
class FfmpegReader {
 public:
  explicit FfmpegReader(std::string location);
  ~FfmpegReader();
  FfmpegReader(const FfmpegReader&) = delete;
  FfmpegReader& operator=(const FfmpegReader&) = delete;

  // `rtspOverTcp`: RTSP's interleaved TCP transport (no UDP ports to open or lose packets on).
  // `hw`: VAAPI decoding when asked and to be had; otherwise software, and SourceInfo's
  // hwFallback says why (no device, a decoder without VAAPI, a hardware decode that failed before:
  // once failed, a reader decodes in software from then on).
  Expected<SourceInfo> open(std::chrono::milliseconds timeout, bool rtspOverTcp,
                            const HwDecode& hw = {});
  // The next picture into `picture`. `timeout` bounds each wait for a packet, and a read whose
  // packets make no picture because they are skipped.
  Expected<void> read(CapturedPicture& picture, std::chrono::milliseconds timeout);
  // Where the last picture read is in the video: seconds from the stream's start, from its
  // timestamp; nullopt when it has none.
  std::optional<double> pictureTime() const;
  // A file read as a camera would deliver it: `wait` is called before each packet of the video
  // is used (and each picture the decoder still holds at the end), and returns false when the
  // read is to end (a stop). Unset, packets are used as they come (a network stream comes at its
  // own pace). Kept by close().
  void setPacing(std::function<bool()> wait) { pace_ = std::move(wait); }
  void close();
  // FrameSource::setKeyframesOnly and its skippingToKeyframe (PictureSkipping): while idle only
  // keyframes are decoded, the packets since the last one kept; leaving idle, or a change the
  // skipped packets' sizes show, decodes them at once.
  void setKeyframesOnly(bool keyframesOnly) { decoding_.setKeyframesOnly(keyframesOnly); }
  bool skippingToKeyframe() const { return decoding_.skippingToKeyframe(); }
  // A picture stream's reader (picture_source): while idle nothing wakes the decoding and one
  // keyframe in 10 s is decoded (PictureSkipping::setPicturesOnly). Kept by close().
  void setPicturesOnly(bool picturesOnly) { decoding_.setPicturesOnly(picturesOnly); }
  // Pictures no other picture refers to (most B-frames) are not decoded at all (skip_frame
  // AVDISCARD_NONREF), for a camera that takes at most every other picture: the newest decoded
  // picture is then at most a run of B-frames older. Keyframes only skips more. Set after
  // open(); close() clears it. False when there is no decoder (an MJPEG stream's pictures are
  // not decoded unless taken anyway).
  bool setSkipNonReference(bool skip) { return decoding_.setSkipNonReference(skip); }
  // capture.skip_loop_filter: an H.264 or H.265 software decoder opened from now on skips its
  // loop filter (deblocking, skip_loop_filter AVDISCARD_ALL) on every picture; SourceInfo's
  // decoder says so.
  void setSkipLoopFilter(bool skip) { decoding_.setSkipLoopFilter(skip); }
  void interrupt() { deadline_.interrupt(); }
  bool isOpen() const { return format_ != nullptr; }

 private:
  Expected<void> readJpeg(CapturedPicture& picture, std::chrono::milliseconds timeout);
  // A decoded stream's next picture: the decoder's, fed the video's packets until it gives one.
  Expected<void> readDecoded(CapturedPicture& picture, std::chrono::milliseconds timeout);
  // The picture the decoder gave, into `picture`; at the input's end, in its turn (pace_).
  Expected<void> deliverReceived(CapturedPicture& picture);
  // The next packet to the decoder (FfmpegDecoding::decodePacket), or the decoder told the
  // input ended; the read's result when that ends it, nullopt to ask the decoder again.
  std::optional<Expected<void>> feedDecoder(CapturedPicture& picture,
                                            std::chrono::milliseconds timeout);
  // pace_ for the packet or picture about to be used; an error when the read is to end.
  Expected<void> waitForTurn();

  std::string location_;
  std::function<bool()> pace_;
  FfmpegDeadline deadline_;  // of each blocking call, and the stop
  AVFormatContext* format_ = nullptr;
  AVPacket* packet_ = nullptr;
  int stream_ = -1;
  int width_ = 0;
  int height_ = 0;
  // The last picture delivered (a JPEG's packet's, a decoded picture's), and the keyframe a
  // replay started from.
  DeliveredPictures delivered_;
  // The decoder and its pictures; not open for an MJPEG stream: its JPEGs are kept as bytes.
  FfmpegDecoding decoding_{location_, delivered_};
};

}  // namespace vigil
