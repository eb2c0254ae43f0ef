#include "detector/yolox_decode.h"

#include <cmath>

namespace vigil {

namespace {

float sigmoid(float v) { return 1.0F / (1.0F + std::exp(-v)); }

}  // namespace

YoloxDecoder::YoloxDecoder(const InputSpec& input, const PostprocessSpec& postprocess)
    : channels_(5 + static_cast<int>(postprocess.classNames.size())),
      scoresActivated_(postprocess.scoresActivated) {
  for (int stride : postprocess.strides) {
    const int gw = input.width / stride;
    const int gh = input.height / stride;
    for (int y = 0; y < gh; ++y) {
      for (int x = 0; x < gw; ++x) {
        grid_.push_back({static_cast<float>(x), static_cast<float>(y), static_cast<float>(stride)});
      }
    }
  }
}

void YoloxDecoder::decode(const Tensor& raw, const LetterboxInfo& letterbox, float minScore,
                          const std::vector<bool>& wantedClasses,
                          std::vector<Detection>& out) const {
  out.clear();
  const int classes = channels_ - 5;
  const float invScale = 1.0F / letterbox.scale;
  const float* row = raw.data.data();
  for (const Cell& cell : grid_) {
    const float* p = row;
    row += channels_;
    float objectness = scoresActivated_ ? p[4] : sigmoid(p[4]);
    // score = objectness * class <= objectness: most anchors end here.
    if (objectness < minScore) continue;
    int best = 0;
    for (int c = 1; c < classes; ++c) {
      if (p[5 + c] > p[5 + best]) best = c;
    }
    float classScore = scoresActivated_ ? p[5 + best] : sigmoid(p[5 + best]);
    float score = objectness * classScore;
    if (score < minScore || !wantedClasses[static_cast<std::size_t>(best)]) continue;

    float cx = (p[0] + cell.x) * cell.stride;
    float cy = (p[1] + cell.y) * cell.stride;
    float w = std::exp(p[2]) * cell.stride;
    float h = std::exp(p[3]) * cell.stride;
    Detection d;
    d.box = Box{(cx - 0.5F * w) * invScale, (cy - 0.5F * h) * invScale, w * invScale, h * invScale};
    d.score = score;
    d.classId = best;
    out.push_back(d);
  }
}

}  // namespace vigil
