#include "daemon/settings/zones.h"

#include <algorithm>
#include <cstddef>

namespace vigil {

bool contains(const Polygon& polygon, Point point) {
  if (polygon.size() < 3) {
    return false;
  }
  bool inside = false;
  for (std::size_t i = 0, j = polygon.size() - 1; i < polygon.size(); j = i++) {
    const Point& a = polygon[i];
    const Point& b = polygon[j];
    // Half-open in y (one end above, the other not), so a ray through a vertex crosses once;
    // it also guarantees a.y != b.y for the division.
    if ((a.y > point.y) != (b.y > point.y)) {
      float crossX = a.x + (point.y - a.y) * (b.x - a.x) / (b.y - a.y);
      if (point.x < crossX) {
        inside = !inside;
      }
    }
  }
  return inside;
}

Point standingPoint(float left, float top, float right, float bottom, Point halfPixel) {
  const float x0 = std::clamp(left, 0.0F, 1.0F);
  const float x1 = std::clamp(right, 0.0F, 1.0F);
  const float y1 = std::clamp(std::max(top, bottom), 0.0F, 1.0F);
  return {std::clamp((x0 + x1) / 2, halfPixel.x, 1.0F - halfPixel.x),
          std::clamp(y1, halfPixel.y, 1.0F - halfPixel.y)};
}

}  // namespace vigil
