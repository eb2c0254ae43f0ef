#pragma once

#include <vector>

#include "detector/box.h"
#include "detector/model_manifest.h"
#include "detector/preprocess.h"
#include "detector/tensor.h"

namespace vigil {

// Turns YOLOX's raw head output [1, anchors, 5 + classes] into candidate detections in source
// pixels, with YOLOX's own rule: per anchor the best class, score = objectness * class score,
// kept when score >= minScore and the class is wanted. Grids are computed once.
class YoloxDecoder {
 public:
  YoloxDecoder(const InputSpec& input, const PostprocessSpec& postprocess);

  int anchorCount() const { return static_cast<int>(grid_.size()); }
  int channelCount() const { return channels_; }

  // wantedClasses[c] says whether class c is kept; its size is the class count.
  // Appends to `out` (cleared first); boxes are divided by the letterbox scale, not clipped.
  void decode(const Tensor& raw, const LetterboxInfo& letterbox, float minScore,
              const std::vector<bool>& wantedClasses, std::vector<Detection>& out) const;

 private:
  struct Cell {
    float x;
    float y;
    float stride;
  };
  std::vector<Cell> grid_;
  int channels_ = 0;
  bool scoresActivated_ = true;
};

}  // namespace vigil
