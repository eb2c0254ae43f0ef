#pragma once

#include <cstdint>
#include <limits>

namespace vigil {

// Which pictures an FFmpeg reader has delivered, by their timestamps: the last one, for its time
// in the video, and, after a backlog's replay (PictureSkipping), the keyframe the replay started
// from. That keyframe was delivered already while idle and comes out of the decoder first again:
// it is not delivered twice, and since only the first picture after a replay can be it, a stream
// repeating timestamps elsewhere loses nothing to this.
// Threads: the reader's.
class DeliveredPictures {
 public:
  static constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::min();  // AV_NOPTS_VALUE

  void delivered(std::int64_t timestamp) { last_ = timestamp; }
  std::int64_t last() const { return last_; }  // kNone: none, or without a timestamp
  // A replay starts from the last picture delivered.
  void replayStarts() { replayed_ = last_; }
  // The picture with this timestamp is the replayed keyframe, out again.
  bool again(std::int64_t timestamp) {
    if (replayed_ == kNone) return false;
    const bool same = timestamp == replayed_;
    replayed_ = kNone;
    return same;
  }
  void clear() { last_ = replayed_ = kNone; }

 private:
  std::int64_t last_ = kNone;
  std::int64_t replayed_ = kNone;
};

}  // namespace vigil
