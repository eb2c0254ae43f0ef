#pragma once

#include <opencv2/core.hpp>
#include <optional>
#include <string_view>

#include "detector/model_manifest.h"
#include "detector/tensor.h"

namespace vigil {

// How a source image was placed into the network input, to map boxes back.
struct LetterboxInfo {
  float scale = 1;  // network pixels per source pixel
  int sourceWidth = 0;
  int sourceHeight = 0;
};

// The YOLOX letterbox: resize by r = min(H/h, W/w) with bilinear interpolation to
// (int(w*r), int(h*r)), place at the top-left corner of a W x H canvas filled with the pad
// value, convert to planar float in the manifest's channel order and value range.
// Denoise: a 3x3 median filter smooths the resized picture before it is placed. Sensor noise on a
// camera's night pictures costs YOLOX more persons than their darkness does, and the median at
// the network's size takes much of it out, cheaply; on colour day pictures it changes little
// but costs some small persons (bench/night.md). kGrey applies it to grey pictures only, what an
// IR camera gives at night (isGrey).
enum class Denoise { kOff, kGrey, kOn };

// "off", "grey", "on"; nullopt for anything else.
std::optional<Denoise> denoiseFromName(std::string_view name);
std::string_view denoiseName(Denoise denoise);

// Whether a BGR picture is grey: its channels differ by less than 2 (of 255) on average, as in
// an IR camera's night pictures (a colour scene, even dark, differs by 9 or more). Samples every
// second pixel of every second row.
bool isGrey(const cv::Mat& bgr);

// Owns its intermediate buffers and reuses them; one instance per worker thread.
class Letterbox {
 public:
  explicit Letterbox(const InputSpec& spec, Denoise denoise = Denoise::kOff);

  // `bgr` is 8-bit, 3 channels, any size. `out` is resized to [1, 3, H, W] on first use and
  // then only written.
  LetterboxInfo run(const cv::Mat& bgr, Tensor& out);

 private:
  InputSpec spec_;
  Denoise denoise_;
  cv::Mat resized_;
  cv::Mat canvas_;
  cv::Mat planes_[3];
};

}  // namespace vigil
