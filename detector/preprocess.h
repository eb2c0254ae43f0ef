#pragma once

#include <opencv2/core.hpp>

#include "detector/model_manifest.h"
#include "detector/tensor.h"

namespace vigil {

// How a source image was placed into the network input, to map boxes back.
struct LetterboxInfo {
  float scale = 1;  // network pixels per source pixel
  int sourceWidth = 0;
  int sourceHeight = 0;
  int inputWidth = 0;  // the network input made, when it is not the manifest's size (fitted)
  int inputHeight = 0;
};

// The YOLOX letterbox: resize by r = min(H/h, W/w) with bilinear interpolation to
// (int(w*r), int(h*r)), place at the top-left corner of a W x H canvas filled with the pad
// value, convert to planar float in the manifest's channel order and value range.
// With `denoise`, a 3x3 median filter smooths the resized picture before it is placed: the
// noise of a colour camera at night costs YOLOX persons, and the median at the network's size
// takes much of it out, cheaply; on clean pictures it costs a few small persons
// (bench/night.md).
// Fitted (setFit with the model's largest stride, for a backend that takes any size): the canvas
// is the resized picture's size rounded up to that multiple, at most W x H, instead of W x H: a
// 16:9 picture makes a 416x256 input of a 416x416 model, its boxes the same (the scale is the
// same), without the padding's work.
// Owns its intermediate buffers and reuses them; one instance per worker thread.
class Letterbox {
 public:
  explicit Letterbox(const InputSpec& spec, bool denoise = false);

  // `bgr` is 8-bit, 3 channels, any size. `out` is resized to [1, 3, H, W] (fitted: the
  // canvas's size) when its shape differs, and otherwise only written.
  LetterboxInfo run(const cv::Mat& bgr, Tensor& out);
  void setDenoise(bool on) { denoise_ = on; }
  // 0: every input W x H (the default).
  void setFit(int multiple) { fit_ = multiple; }

 private:
  InputSpec spec_;
  bool denoise_;
  int fit_ = 0;
  cv::Mat resized_;
  cv::Mat canvas_;
  cv::Mat planes_[3];
};

}  // namespace vigil
