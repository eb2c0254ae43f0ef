#include "detector/nms.h"

#include <algorithm>
#include <numeric>

namespace vigil {

void nonMaximumSuppression(const std::vector<Detection>& candidates, float iouThreshold,
                           int maxDetections, std::vector<int>& order,
                           std::vector<Detection>& kept) {
  order.resize(candidates.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return candidates[static_cast<std::size_t>(a)].score >
           candidates[static_cast<std::size_t>(b)].score;
  });
  kept.clear();
  for (int index : order) {
    if (kept.size() >= static_cast<std::size_t>(maxDetections)) break;
    const Detection& candidate = candidates[static_cast<std::size_t>(index)];
    bool suppressed = false;
    for (const Detection& k : kept) {
      if (k.classId == candidate.classId && iou(k.box, candidate.box) > iouThreshold) {
        suppressed = true;
        break;
      }
    }
    if (!suppressed) kept.push_back(candidate);
  }
}

void clipBoxes(std::vector<Detection>& detections, int width, int height) {
  const auto w = static_cast<float>(width);
  const auto h = static_cast<float>(height);
  for (Detection& d : detections) {
    float x1 = std::clamp(d.box.x, 0.0F, w);
    float y1 = std::clamp(d.box.y, 0.0F, h);
    float x2 = std::clamp(d.box.right(), 0.0F, w);
    float y2 = std::clamp(d.box.bottom(), 0.0F, h);
    d.box = Box{x1, y1, x2 - x1, y2 - y1};
  }
}

}  // namespace vigil
