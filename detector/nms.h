#pragma once

#include <vector>

#include "detector/box.h"

namespace vigil {

// Class-aware greedy non-maximum suppression, the rule of torchvision's batched_nms: in
// descending score order (ties keep input order), a detection is dropped when its IoU with an
// already kept detection of the same class is greater than iouThreshold. Keeps at most
// maxDetections. `kept` receives the survivors in descending score order; `order` is scratch
// space. Both keep their capacity across calls, so a steady stream of frames does not allocate.
void nonMaximumSuppression(const std::vector<Detection>& candidates, float iouThreshold,
                           int maxDetections, std::vector<int>& order,
                           std::vector<Detection>& kept);

// Clips every box to [0, width] x [0, height].
void clipBoxes(std::vector<Detection>& detections, int width, int height);

}  // namespace vigil
