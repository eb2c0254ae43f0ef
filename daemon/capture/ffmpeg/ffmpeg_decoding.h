#pragma once

#include <optional>
#include <string>

#include "daemon/base/error.h"
#include "daemon/capture/ffmpeg/delivered_pictures.h"
#include "daemon/capture/ffmpeg/picture_skipping.h"
#include "daemon/capture/frame/frame_source.h"
#include "daemon/capture/picture/captured_picture.h"
#include "daemon/settings/settings.h"

struct AVBufferRef;
struct AVCodecContext;
struct AVFrame;
struct AVPacket;
struct AVStream;

namespace vigil {

// An FFmpeg reader's decoder at work (ffmpeg_decoder opens it): what it makes of the video's
// packets. Each packet goes where PictureSkipping says (sent, kept for a replay, or an idle
// keyframe sent and drained at once), and each picture decoded is delivered once (the keyframe a
// replay starts from, delivered already, is not again), by reference, colour-converted only when
// taken. The reader keeps the input: reading packets, their deadlines and their pacing.
// Ownership and threads: the reader's thread only; `location` (for messages) and `delivered` are
// the reader's, borrowed for this object's life.
// Failure: kEndOfStream when the decoder has given its last picture, kUnavailable when it stopped
// (a VAAPI decoder that failed is remembered: the next open decodes in software), kInvalidData
// for a packet it refused or a picture that is none; never throws.
class FfmpegDecoding {
 public:
  FfmpegDecoding(const std::string& location, DeliveredPictures& delivered);
  ~FfmpegDecoding();
  FfmpegDecoding(const FfmpegDecoding&) = delete;
  FfmpegDecoding& operator=(const FfmpegDecoding&) = delete;

  // The decoder for `stream`, as `hw` and setSkipLoopFilter ask; `info` gets its description
  // (FfmpegReader::open).
  Expected<void> open(const AVStream& stream, const HwDecode& hw, SourceInfo& info);
  void close();
  bool isOpen() const { return decoder_ != nullptr; }

  // Leaving idle with packets kept: from their keyframe to the newest at once, into `picture`;
  // nullopt when no replay is due or it gave no new picture.
  std::optional<Expected<void>> replayBacklog(CapturedPicture& picture);
  // The decoder's next picture, not delivered yet (a replay's keyframe out again is dropped):
  // true when there is one (deliverReceived), false when the decoder needs a packet first.
  Expected<bool> receive();
  Expected<void> deliverReceived(CapturedPicture& picture) { return deliver(received_, picture); }
  // The picture receive() gave, not to be delivered (the read is to end).
  void dropReceived();
  // A packet of the video, `seconds` into it (decode order), as PictureSkipping says; the packet
  // is unreferenced after. A picture into `picture` when one came of it at once (a wake's
  // replay, a drained keyframe), kInvalidData when the decoder refused the packet, nullopt when
  // the decoder is to be asked for a picture (receive) next.
  std::optional<Expected<void>> decodePacket(AVPacket* packet, double seconds,
                                             CapturedPicture& picture);
  // The input ended: the decoder gives the pictures it still holds (reordering), then the end.
  void flush();
  bool flushing() const { return flushing_; }

  // FfmpegReader's setters of the same names (which pictures are decoded, and how).
  void setKeyframesOnly(bool keyframesOnly) { skipping_.setKeyframesOnly(keyframesOnly); }
  bool skippingToKeyframe() const { return skipping_.skippingToKeyframe(); }
  void setPicturesOnly(bool picturesOnly) { skipping_.setPicturesOnly(picturesOnly); }
  bool setSkipNonReference(bool skip);
  void setSkipLoopFilter(bool skip) { skipLoopFilter_ = skip; }

 private:
  // A decoded picture into `picture` by reference, or why it is no picture (unreferenced then).
  Expected<void> deliver(AVFrame* decoded, CapturedPicture& picture);
  // skipping_.replay() into newest_, noting which picture it may give again; true when it gave
  // one not delivered already.
  bool replayedNewPicture();
  // The first picture after a replay is the replayed keyframe, delivered already: unreferenced,
  // true.
  bool deliveredAlready(AVFrame* decoded);
  // Idle, a keyframe: sent, and the decoder drained of its picture at once
  // (PictureSkipping::drainKeyframe).
  std::optional<Expected<void>> sendKeyframeAndDrain(AVPacket* packet, CapturedPicture& picture);
  // avcodec_send_packet's `rc` for a packet: kInvalidData when it refused the packet.
  std::optional<Expected<void>> refusedPacket(int rc) const;

  const std::string& location_;
  DeliveredPictures& delivered_;
  AVCodecContext* decoder_ = nullptr;
  AVBufferRef* hwDevice_ = nullptr;  // the VAAPI device while the decoder uses it
  std::string hwFailed_;             // why hardware decoding failed mid-stream (sticky)
  AVFrame* received_ = nullptr;      // the decoder's picture (and a replay's scratch)
  AVFrame* newest_ = nullptr;        // the newest picture of a backlog's replay
  bool flushing_ = false;            // the input ended: the decoder gives its last pictures
  bool skipLoopFilter_ = false;
  PictureSkipping skipping_;  // which pictures the decoder decodes
};

}  // namespace vigil
