#pragma once

#include <cstddef>
#include <vector>

struct AVCodecContext;
struct AVFrame;
struct AVPacket;

namespace vigil {

// Every picture `decoder` has ready, received through `scratch`; the newest is left in `newest`
// (what it held before is unreferenced). True when there was any.
bool receiveNewest(AVCodecContext* decoder, AVFrame* scratch, AVFrame* newest);

// The packets an idle camera's decoder skips (PictureSkipping, keyframes only), from the last
// keyframe on, kept by reference: leaving idle then decodes from that keyframe to the newest
// packet at once, as a player seeks, instead of waiting for the stream's next keyframe (up to its
// keyframe interval: seconds in which a person who just walked in is not looked at).
// At most kMostPackets: a longer run (keyframes far apart, or never flagged) is dropped, and
// leaving idle waits for the next keyframe again. Packet holders are allocated as the backlog
// first grows and reused from then on.
// Threads: one (the reader's).
class KeyframeBacklog {
 public:
  static constexpr std::size_t kMostPackets = 600;  // 20 s at 30 frames/s

  KeyframeBacklog() = default;
  ~KeyframeBacklog();
  KeyframeBacklog(const KeyframeBacklog&) = delete;
  KeyframeBacklog& operator=(const KeyframeBacklog&) = delete;

  // A packet of the video while keyframes only: a keyframe starts the backlog again; any other
  // is kept after the keyframe (none kept before the first keyframe).
  void keep(const AVPacket* packet);
  // The packets kept: 0, 1 (only the keyframe, decoded already: nothing to catch up) or more.
  std::size_t size() const { return used_; }
  // Decodes the kept packets into `decoder`, flushed first, and leaves the newest picture it
  // gives in `newest` (unreferenced when none); `scratch` is a frame to receive into. Pictures
  // nothing refers to are skipped (skip_frame AVDISCARD_NONREF; the caller sets skip_frame
  // afterwards): only the newest is delivered. Empty afterwards.
  void replay(AVCodecContext* decoder, AVFrame* scratch, AVFrame* newest);
  void clear();

 private:
  std::vector<AVPacket*> packets_;  // the first used_ hold packets, the rest are blank
  std::size_t used_ = 0;
};

}  // namespace vigil
