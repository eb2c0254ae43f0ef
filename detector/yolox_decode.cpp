#include "detector/yolox_decode.h"

#include <cmath>

namespace vigil {

namespace {

float sigmoid(float v) { return 1.0F / (1.0F + std::exp(-v)); }

}  // namespace

YoloxDecoder::YoloxDecoder(const InputSpec& input, const PostprocessSpec& postprocess)
    : strides_(postprocess.strides),
      width_(input.width),
      height_(input.height),
      channels_(5 + static_cast<int>(postprocess.classNames.size())),
      scoresActivated_(postprocess.scoresActivated) {}

int YoloxDecoder::anchorCount(int width, int height) const {
  int anchors = 0;
  for (int stride : strides_) anchors += (width / stride) * (height / stride);
  return anchors;
}

void YoloxDecoder::decode(const Tensor& raw, const LetterboxInfo& letterbox, float minScore,
                          const std::vector<bool>& wantedClasses,
                          std::vector<Detection>& out) const {
  out.clear();
  const int width = letterbox.inputWidth > 0 ? letterbox.inputWidth : width_;
  const int height = letterbox.inputHeight > 0 ? letterbox.inputHeight : height_;
  const int classes = channels_ - 5;
  const float invScale = 1.0F / letterbox.scale;
  const float* p = raw.data.data();
  for (int strideInt : strides_) {
    const auto stride = static_cast<float>(strideInt);
    const int gw = width / strideInt;
    const int gh = height / strideInt;
    for (int y = 0; y < gh; ++y) {
      for (int x = 0; x < gw; ++x, p += channels_) {
        const float objectness = scoresActivated_ ? p[4] : sigmoid(p[4]);
        // score = objectness * class <= objectness: most anchors end here.
        if (objectness < minScore) continue;
        int best = 0;
        for (int c = 1; c < classes; ++c) {
          if (p[5 + c] > p[5 + best]) best = c;
        }
        const float classScore = scoresActivated_ ? p[5 + best] : sigmoid(p[5 + best]);
        const float score = objectness * classScore;
        if (score < minScore || !wantedClasses[static_cast<std::size_t>(best)]) continue;

        const float cx = (p[0] + static_cast<float>(x)) * stride;
        const float cy = (p[1] + static_cast<float>(y)) * stride;
        const float w = std::exp(p[2]) * stride;
        const float h = std::exp(p[3]) * stride;
        Detection d;
        d.box =
            Box{(cx - 0.5F * w) * invScale, (cy - 0.5F * h) * invScale, w * invScale, h * invScale};
        d.score = score;
        d.classId = best;
        out.push_back(d);
      }
    }
  }
}

}  // namespace vigil
