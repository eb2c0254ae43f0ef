#include "daemon/capture/ffmpeg/picture_skipping.h"

extern "C" {
#include <libavcodec/avcodec.h>
}

namespace vigil {

void PictureSkipping::attach(AVCodecContext* decoder) {
  detach();
  decoder_ = decoder;
}

void PictureSkipping::detach() {
  decoder_ = nullptr;
  lastKeyframeDecoded_ = -1;
  keeping_ = false;
  skipNonReference_ = false;
  mode_ = Mode::kAsUsual;
  backlog_.clear();
  meter_.reset();
}

void PictureSkipping::decodeAsUsual() {
  decoder_->skip_frame = skipNonReference_ ? AVDISCARD_NONREF : AVDISCARD_DEFAULT;
}

void PictureSkipping::setSkipNonReference(bool skip) {
  if (decoder_ == nullptr) return;
  skipNonReference_ = skip;
  if (mode_ == Mode::kAsUsual || mode_ == Mode::kWoken) decodeAsUsual();
}

void PictureSkipping::setKeyframesOnly(bool keyframesOnly) {
  const bool idle = mode_ == Mode::kKeyframesOnly || mode_ == Mode::kWoken;
  if (decoder_ == nullptr || keyframesOnly == idle) return;
  if (keyframesOnly) {
    decoder_->skip_frame = AVDISCARD_NONKEY;
    mode_ = Mode::kKeyframesOnly;
    backlog_.clear();
    meter_.startStretch();
  } else if (mode_ == Mode::kWoken) {
    mode_ = Mode::kAsUsual;  // every picture is being decoded already
  } else if (backlog_.size() > 0) {
    mode_ = Mode::kReplayDue;  // the decoder was flushed after the keyframe (drainKeyframe)
  } else {
    mode_ = Mode::kAwaitingKeyframe;
    packetsAwaiting_ = 0;
  }
}

PictureSkipping::Verdict PictureSkipping::admit(const AVPacket* packet, double seconds) {
  if (mode_ == Mode::kAwaitingKeyframe) awaitKeyframe(packet);
  const bool key = (packet->flags & AV_PKT_FLAG_KEY) != 0;
  if (mode_ == Mode::kWoken && key) {
    mode_ = Mode::kKeyframesOnly;  // keyframes only again, from this one on
    decoder_->skip_frame = AVDISCARD_NONKEY;
  }
  if (mode_ != Mode::kKeyframesOnly) return Verdict::kSend;
  backlog_.keep(packet);
  if (picturesOnly_) return admitPictureOnly(key, seconds);
  if (key) return Verdict::kSendAndDrain;
  if (!meter_.changed(seconds, packet->size) || backlog_.size() == 0) return Verdict::kSend;
  mode_ = Mode::kWoken;  // a keyframe to decode from
  return Verdict::kWake;
}

PictureSkipping::Verdict PictureSkipping::admitPictureOnly(bool key, double seconds) {
  if (key) {
    // Due after keyframeEvery_, and at once when the video started again (a file's loop).
    keeping_ = seconds >= lastKeyframeDecoded_ && lastKeyframeDecoded_ >= 0 &&
               seconds - lastKeyframeDecoded_ < keyframeEvery_;
    if (keeping_) return Verdict::kKeep;
    lastKeyframeDecoded_ = seconds;
    return Verdict::kSendAndDrain;
  }
  return keeping_ ? Verdict::kKeep : Verdict::kSend;
}

bool PictureSkipping::replay(AVFrame* scratch, AVFrame* newest) {
  backlog_.replay(decoder_, scratch, newest);
  if (mode_ == Mode::kReplayDue) mode_ = Mode::kAsUsual;
  decodeAsUsual();
  return newest->width > 0;
}

bool PictureSkipping::drainKeyframe(AVFrame* scratch, AVFrame* newest) {
  av_frame_unref(newest);
  avcodec_send_packet(decoder_, nullptr);
  receiveNewest(decoder_, scratch, newest);
  avcodec_flush_buffers(decoder_);  // takes packets again
  return newest->width > 0;
}

void PictureSkipping::awaitKeyframe(const AVPacket* packet) {
  // A stream that never flags its keyframes resumes anyway after a while.
  constexpr int kMostPacketsAwaited = 600;
  if ((packet->flags & AV_PKT_FLAG_KEY) == 0 && ++packetsAwaiting_ < kMostPacketsAwaited) return;
  mode_ = Mode::kAsUsual;
  decodeAsUsual();
}

}  // namespace vigil
