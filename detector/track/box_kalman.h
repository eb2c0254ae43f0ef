#pragma once

#include <array>

#include "detector/box.h"

namespace vigil {

// A box's constant-velocity Kalman filter, the one of SORT, DeepSORT and ByteTrack: the state is
// the box's centre (x, y), aspect ratio (width / height) and height, each with its velocity, and
// the noise is proportional to the box's height. The published filter steps one frame of a
// 30 fps video at a time; this one steps any time `dt` (seconds) in units of those frames, with
// the process noise growing with `dt`, so that detections a fifth of a second or two seconds
// apart are predicted alike.
//
// Because every matrix of that filter is block diagonal per coordinate (F, Q, H and R, and so the
// covariance), it runs as four independent two-state filters: the same numbers as the 8 x 8 form.
class BoxKalman {
 public:
  // The frame time the published noise levels are for.
  static constexpr double kReferenceFps = 30.0;

  explicit BoxKalman(const Box& box);

  // Moves the state `dtSeconds` ahead (>= 0).
  void predict(double dtSeconds);
  // Stops the height changing: what ByteTrack does to a lost track's box before each prediction.
  void holdHeight() { axes_[kHeight].v = 0; }
  // Corrects the state with a measured box.
  void update(const Box& box);
  // The state's box; its height is kept at least one pixel.
  Box box() const;

 private:
  struct Axis {
    double x = 0;    // position
    double v = 0;    // velocity, per reference frame
    double pxx = 0;  // covariance
    double pxv = 0;
    double pvv = 0;
  };
  static constexpr int kCx = 0, kCy = 1, kAspect = 2, kHeight = 3;

  double height() const;

  std::array<Axis, 4> axes_;
};

}  // namespace vigil
