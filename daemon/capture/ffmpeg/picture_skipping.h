#pragma once

#include "daemon/capture/ffmpeg/keyframe_backlog.h"
#include "daemon/capture/ffmpeg/packet_change_meter.h"

struct AVCodecContext;
struct AVFrame;
struct AVPacket;

namespace vigil {

// Which of a stream's pictures FFmpeg's decoder decodes (its skip_frame), for FfmpegReader:
// - every one, or all but those no other picture refers to (setSkipNonReference: most
//   B-frames, for a camera that takes at most every other picture);
// - while its camera is idle (setKeyframesOnly), only the keyframes (AVDISCARD_NONKEY), the
//   packets since the last keyframe kept meanwhile (KeyframeBacklog). Told to resume, the next
//   read decodes those from their keyframe at once (replay) and gives the newest picture; with
//   none kept (no keyframe since going idle, or too many), it goes on skipping until the next
//   keyframe packet (a picture decoded from references it skipped would be damaged).
// - while idle, when the skipped packets' sizes say the picture changed (PacketChangeMeter), it
//   wakes: the kept packets are decoded the same way, and every picture after them until the
//   next keyframe, where it skips again unless told to resume meanwhile; the motion check on
//   those pictures decides whether the camera leaves idle.
// Threads: the reader's.
class PictureSkipping {
 public:
  // The decoder just opened, every picture decoded; detach() before the decoder is freed.
  void attach(AVCodecContext* decoder);
  void detach();

  void setSkipNonReference(bool skip);
  void setKeyframesOnly(bool keyframesOnly);
  // A picture stream's reader (FfmpegReader::setPicturesOnly): while idle nothing wakes the
  // decoding (that is for a motion check, which a picture stream has not), and a keyframe is
  // decoded only when `keyframeEvery` seconds of the video passed since the last one decoded
  // (enough to keep the stream known alive); the others and the packets after them are kept for
  // a replay but never sent. Off unless set; kept by attach() and detach().
  void setPicturesOnly(bool picturesOnly, double keyframeEvery = 10) {
    picturesOnly_ = picturesOnly;
    keyframeEvery_ = keyframeEvery;
  }
  // Pictures are being skipped to a keyframe: idle and not woken, or told to resume and no
  // keyframe since.
  bool skippingToKeyframe() const {
    return mode_ == Mode::kKeyframesOnly || mode_ == Mode::kAwaitingKeyframe;
  }

  enum class Verdict {
    kSend,          // send the packet to the decoder
    kSendAndDrain,  // idle: send this keyframe, then drainKeyframe()
    kWake,          // the packet is kept and says the picture changed: replay() now
    kKeep,          // idle, pictures only: the packet is kept for a replay and not sent
  };
  // A packet of the video about to go to the decoder, `seconds` into the video (decode order).
  Verdict admit(const AVPacket* packet, double seconds);
  // Told to resume with packets kept: the next read replays them first.
  bool replayDue() const { return mode_ == Mode::kReplayDue; }
  // Decodes the packets kept, from their keyframe, into `newest` (`scratch`: a frame to receive
  // into); every picture is decoded afterwards. True when it gave a picture.
  bool replay(AVFrame* scratch, AVFrame* newest);
  // Idle, a keyframe just sent: nothing decoded follows it for a keyframe interval, and a decoder
  // that reorders pictures (B-frames) would hold its picture that long. The decoder is drained
  // into `newest` and flushed (a replay starts from the keyframe again). True when it gave a
  // picture.
  bool drainKeyframe(AVFrame* scratch, AVFrame* newest);

 private:
  bool picturesOnly_ = false;
  double keyframeEvery_ = 0;
  // Pictures only: the video time of the last keyframe decoded while idle, and whether the
  // packets now arriving follow a keyframe that was not.
  double lastKeyframeDecoded_ = -1;
  bool keeping_ = false;
  // skip_frame when not skipping to a keyframe: every picture, or the referenced ones.
  void decodeAsUsual();
  // Told to resume with no keyframe kept: until a keyframe packet, keyframes only.
  void awaitKeyframe(const AVPacket* packet);
  // admit() for a picture stream's packet while idle (setPicturesOnly).
  Verdict admitPictureOnly(bool key, double seconds);

  enum class Mode {
    kAsUsual,           // every picture, or the referenced ones (skipNonReference_)
    kKeyframesOnly,     // idle: only keyframes decoded, the packets since the last one kept
    kWoken,             // idle, woken by a change: every picture until the next keyframe
    kReplayDue,         // told to resume with packets kept: the next read replays them
    kAwaitingKeyframe,  // told to resume with none kept: keyframes only until a keyframe packet
  };

  AVCodecContext* decoder_ = nullptr;
  bool skipNonReference_ = false;
  Mode mode_ = Mode::kAsUsual;
  int packetsAwaiting_ = 0;
  KeyframeBacklog backlog_;  // while keyframes only: the packets since the last keyframe
  PacketChangeMeter meter_;  // while keyframes only: whether the skipped packets say "changed"
};

}  // namespace vigil
