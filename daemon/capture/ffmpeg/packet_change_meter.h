#pragma once

#include <cstdint>
#include <deque>
#include <optional>

namespace vigil {

// Whether an idle camera's picture changed, from the sizes of the packets its decoder skips
// (PictureSkipping, keyframes only): an encoder spends its bytes on what changed, so a still
// scene costs a steady trickle of bytes between keyframes and somebody walking in many times
// more. The bytes of the last kWindowSeconds of packets are compared with their usual amount (a
// running average: over about kBaselineSeconds, and kLastingChangeSeconds while changed, so that
// a lasting new level, a light switched on, becomes the usual): kChangeRatio times that is a
// change. The usual amount is kept from one still stretch to the next (the first stretch's
// first window sets it), so somebody walking in as the camera goes idle is a change too.
// A hint, not motion: the motion check on the decoded picture decides. A camera whose encoder
// keeps a constant bitrate shows no change here, and its motion is then seen only at keyframes.
// Threads: one (the reader's).
class PacketChangeMeter {
 public:
  static constexpr double kWindowSeconds = 0.5;  // a few pictures of every kind (I, P, B)
  static constexpr double kBaselineSeconds = 5.0;
  static constexpr double kLastingChangeSeconds = 30.0;
  static constexpr double kChangeRatio = 4.0;

  // A new still stretch: the window starts empty; the usual amount is kept.
  void startStretch();
  // A new stream: nothing is known.
  void reset();
  // A skipped packet of `bytes`, `seconds` into the video (decode order); true when the window
  // ending with it holds kChangeRatio times the usual bytes.
  bool changed(double seconds, std::int64_t bytes);

 private:
  struct Packet {
    double seconds;
    std::int64_t bytes;
  };
  std::deque<Packet> window_;
  std::int64_t windowBytes_ = 0;
  std::optional<double> start_;  // the stretch's first packet's time
  std::optional<double> last_;   // the previous packet's time
  double baseline_ = 0;          // bytes in a window, usually; 0 until a first window was full
};

}  // namespace vigil
