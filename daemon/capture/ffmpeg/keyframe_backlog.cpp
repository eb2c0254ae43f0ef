#include "daemon/capture/ffmpeg/keyframe_backlog.h"

extern "C" {
#include <libavcodec/avcodec.h>
}

namespace vigil {

bool receiveNewest(AVCodecContext* decoder, AVFrame* scratch, AVFrame* newest) {
  bool received = false;
  while (avcodec_receive_frame(decoder, scratch) == 0) {
    av_frame_unref(newest);
    av_frame_move_ref(newest, scratch);
    received = true;
  }
  return received;
}

KeyframeBacklog::~KeyframeBacklog() {
  for (AVPacket*& packet : packets_) av_packet_free(&packet);
}

void KeyframeBacklog::keep(const AVPacket* packet) {
  if ((packet->flags & AV_PKT_FLAG_KEY) != 0) {
    clear();
  } else if (used_ == 0 || used_ >= kMostPackets) {
    clear();  // no keyframe to start from, or too far back to keep
    return;
  }
  if (used_ == packets_.size()) {
    AVPacket* holder = av_packet_alloc();
    if (holder == nullptr) {  // out of memory: leaving idle waits for the next keyframe
      clear();
      return;
    }
    packets_.push_back(holder);
  }
  if (av_packet_ref(packets_[used_], packet) < 0) {
    clear();
    return;
  }
  ++used_;
}

void KeyframeBacklog::replay(AVCodecContext* decoder, AVFrame* scratch, AVFrame* newest) {
  av_frame_unref(newest);
  avcodec_flush_buffers(decoder);
  decoder->skip_frame = AVDISCARD_NONREF;
  for (std::size_t i = 0; i < used_; ++i) {
    for (;;) {
      // A packet the decoder refuses (corrupt) is passed over: the next reference repairs it.
      const int sent = avcodec_send_packet(decoder, packets_[i]);
      const bool received = receiveNewest(decoder, scratch, newest);
      if (sent != AVERROR(EAGAIN) || !received) break;  // EAGAIN: send again once emptied
    }
  }
  clear();
}

void KeyframeBacklog::clear() {
  for (std::size_t i = 0; i < used_; ++i) av_packet_unref(packets_[i]);
  used_ = 0;
}

}  // namespace vigil
