#include "daemon/capture/picture_skipping.h"

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
  skipNonReference_ = keyframesOnly_ = awake_ = replayDue_ = awaitingKeyframe_ = false;
  backlog_.clear();
  meter_.reset();
}

void PictureSkipping::decodeAsUsual() {
  decoder_->skip_frame = skipNonReference_ ? AVDISCARD_NONREF : AVDISCARD_DEFAULT;
}

void PictureSkipping::setSkipNonReference(bool skip) {
  if (decoder_ == nullptr) return;
  skipNonReference_ = skip;
  if (!skippingToKeyframe() && !replayDue_) decodeAsUsual();
}

void PictureSkipping::setKeyframesOnly(bool keyframesOnly) {
  if (decoder_ == nullptr || keyframesOnly == keyframesOnly_) return;
  keyframesOnly_ = keyframesOnly;
  if (keyframesOnly) {
    decoder_->skip_frame = AVDISCARD_NONKEY;
    awaitingKeyframe_ = replayDue_ = awake_ = false;
    backlog_.clear();
    meter_.startStretch();
  } else if (awake_) {
    awake_ = false;  // every picture is being decoded already
  } else if (backlog_.size() > 0) {
    replayDue_ = true;  // the decoder was flushed after the keyframe (drainKeyframe)
  } else {
    awaitingKeyframe_ = true;
    packetsAwaiting_ = 0;
  }
}

PictureSkipping::Verdict PictureSkipping::admit(const AVPacket* packet, double seconds) {
  if (awaitingKeyframe_) awaitKeyframe(packet);
  if (!keyframesOnly_) return Verdict::kSend;
  const bool key = (packet->flags & AV_PKT_FLAG_KEY) != 0;
  if (awake_) {
    if (!key) return Verdict::kSend;
    awake_ = false;  // keyframes only again, from this one on
    decoder_->skip_frame = AVDISCARD_NONKEY;
  }
  backlog_.keep(packet);
  if (key) return Verdict::kSendAndDrain;
  if (!meter_.changed(seconds, packet->size) || backlog_.size() == 0) return Verdict::kSend;
  awake_ = true;  // a keyframe to decode from
  return Verdict::kWake;
}

bool PictureSkipping::replay(AVFrame* scratch, AVFrame* newest) {
  backlog_.replay(decoder_, scratch, newest);
  replayDue_ = false;
  decodeAsUsual();
  return newest->width > 0;
}

bool PictureSkipping::drainKeyframe(AVFrame* scratch, AVFrame* newest) {
  av_frame_unref(newest);
  avcodec_send_packet(decoder_, nullptr);
  while (avcodec_receive_frame(decoder_, scratch) == 0) {
    av_frame_unref(newest);
    av_frame_move_ref(newest, scratch);
  }
  avcodec_flush_buffers(decoder_);  // takes packets again
  return newest->width > 0;
}

void PictureSkipping::awaitKeyframe(const AVPacket* packet) {
  // A stream that never flags its keyframes resumes anyway after a while.
  constexpr int kMostPacketsAwaited = 600;
  if ((packet->flags & AV_PKT_FLAG_KEY) == 0 && ++packetsAwaiting_ < kMostPacketsAwaited) return;
  awaitingKeyframe_ = false;
  decodeAsUsual();
}

}  // namespace vigil
