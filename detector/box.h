#pragma once

#include <algorithm>
#include <vector>

namespace vigil {

// An axis-aligned box in pixels, x/y the top-left corner. Continuous coordinates: a box from
// x to x + width covers width pixels, the convention of COCO and of torchvision's NMS.
struct Box {
  float x = 0;
  float y = 0;
  float width = 0;
  float height = 0;

  float area() const { return width > 0 && height > 0 ? width * height : 0.0F; }
  float right() const { return x + width; }
  float bottom() const { return y + height; }
};

// `box` on a picture `sx` times as wide and `sy` times as tall as the one it was found on.
inline Box scaledBox(const Box& box, double sx, double sy) {
  return {static_cast<float>(box.x * sx), static_cast<float>(box.y * sy),
          static_cast<float>(box.width * sx), static_cast<float>(box.height * sy)};
}

inline float intersectionArea(const Box& a, const Box& b) {
  float w = std::min(a.right(), b.right()) - std::max(a.x, b.x);
  float h = std::min(a.bottom(), b.bottom()) - std::max(a.y, b.y);
  return w > 0 && h > 0 ? w * h : 0.0F;
}

inline float iou(const Box& a, const Box& b) {
  float inter = intersectionArea(a, b);
  float uni = a.area() + b.area() - inter;
  return uni > 0 ? inter / uni : 0.0F;
}

struct Detection {
  Box box;
  float score = 0;
  int classId = 0;
};

}  // namespace vigil
