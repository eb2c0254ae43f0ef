#include "detector/preprocess.h"

#include <algorithm>
#include <opencv2/imgproc.hpp>

namespace vigil {

Letterbox::Letterbox(const InputSpec& spec, bool denoise) : spec_(spec), denoise_(denoise) {}

LetterboxInfo Letterbox::run(const cv::Mat& bgr, Tensor& out) {
  CV_Assert(bgr.type() == CV_8UC3 && !bgr.empty());
  LetterboxInfo info;
  info.sourceWidth = bgr.cols;
  info.sourceHeight = bgr.rows;
  info.scale = std::min(static_cast<float>(spec_.height) / static_cast<float>(bgr.rows),
                        static_cast<float>(spec_.width) / static_cast<float>(bgr.cols));
  // Truncation, as YOLOX's preproc does with int(); at least one pixel either way.
  const int rw =
      std::clamp(static_cast<int>(static_cast<float>(bgr.cols) * info.scale), 1, spec_.width);
  const int rh =
      std::clamp(static_cast<int>(static_cast<float>(bgr.rows) * info.scale), 1, spec_.height);
  auto fitted = [this](int size, int declared) {
    return fit_ > 0 ? std::min(declared, (size + fit_ - 1) / fit_ * fit_) : declared;
  };
  const int w = fitted(rw, spec_.width);
  const int h = fitted(rh, spec_.height);
  if (fit_ > 0) {
    info.inputWidth = w;
    info.inputHeight = h;
  }
  if (out.shape != std::vector<std::int64_t>{1, 3, h, w}) out.resize({1, 3, h, w});
  canvas_.create(h, w, CV_8UC3);

  canvas_.setTo(cv::Scalar::all(spec_.padValue));
  cv::Mat target = canvas_(cv::Rect(0, 0, rw, rh));
  const bool resize = rw != bgr.cols || rh != bgr.rows;
  if (resize) cv::resize(bgr, resized_, cv::Size(rw, rh), 0, 0, cv::INTER_LINEAR);
  const cv::Mat& placed = resize ? resized_ : bgr;
  if (denoise_) {
    cv::medianBlur(placed, target, 3);  // the picture's own edge replicated, not the padding
  } else {
    placed.copyTo(target);
  }

  cv::split(canvas_, planes_);
  const double alpha = (spec_.valueMax - spec_.valueMin) / 255.0;
  const double beta = spec_.valueMin;
  const bool rgb = spec_.channelOrder == ChannelOrder::kRgb;
  const std::size_t planeSize = static_cast<std::size_t>(w) * static_cast<std::size_t>(h);
  for (int c = 0; c < 3; ++c) {
    // Header over the tensor's own storage: convertTo writes in place, no allocation.
    cv::Mat dst(h, w, CV_32F, out.data.data() + static_cast<std::size_t>(c) * planeSize);
    planes_[rgb ? 2 - c : c].convertTo(dst, CV_32F, alpha, beta);
  }
  return info;
}

}  // namespace vigil
