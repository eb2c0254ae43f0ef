#pragma once

#include <vector>

#include "detector/box.h"
#include "detector/model_manifest.h"
#include "detector/preprocess.h"
#include "detector/tensor.h"

namespace vigil {

// Turns YOLOX's raw head output [1, anchors, 5 + classes] into candidate detections in source
// pixels, with YOLOX's own rule: per anchor the best class, score = objectness * class score,
// kept when score >= minScore and the class is wanted. The grids are those of the network input
// the letterbox made (LetterboxInfo::inputWidth/inputHeight; the manifest's size when unset):
// row-major cells of each stride in turn.
class YoloxDecoder {
 public:
  YoloxDecoder(const InputSpec& input, const PostprocessSpec& postprocess);

  // Anchors of the manifest's input size, or of a width x height input.
  int anchorCount() const { return anchorCount(width_, height_); }
  int anchorCount(int width, int height) const;
  int channelCount() const { return channels_; }

  // wantedClasses[c] says whether class c is kept; its size is the class count.
  // Appends to `out` (cleared first); boxes are divided by the letterbox scale, not clipped.
  void decode(const Tensor& raw, const LetterboxInfo& letterbox, float minScore,
              const std::vector<bool>& wantedClasses, std::vector<Detection>& out) const;

 private:
  std::vector<int> strides_;
  int width_ = 0;
  int height_ = 0;
  int channels_ = 0;
  bool scoresActivated_ = true;
};

}  // namespace vigil
