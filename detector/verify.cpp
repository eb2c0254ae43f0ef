#include "detector/verify.h"

#include <cmath>
#include <limits>

namespace vigil {

Expected<void> checkFinite(std::span<const float> values, std::string_view what) {
  // A branch-free pass first: x - x is 0 for finite x and NaN for NaN/Inf, so the sum is
  // finite exactly when every element is; the slow search runs only on failure.
  float acc = 0;
  for (float v : values) acc += v - v;
  if (acc == 0) return {};
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      return makeError(ErrorCode::kInvalidOutput, "{}: element {} of {} is {}", what, i,
                       values.size(), values[i]);
    }
  }
  return {};
}

float maxAbsDiff(std::span<const float> a, std::span<const float> b) {
  if (a.size() != b.size()) return std::numeric_limits<float>::infinity();
  float worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    float d = std::fabs(a[i] - b[i]);
    if (std::isnan(d)) return d;
    worst = std::max(worst, d);
  }
  return worst;
}

}  // namespace vigil
