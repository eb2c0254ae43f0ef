#include "detector/verify.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace vigil {

Expected<void> checkFinite(std::span<const float> values, std::string_view what) {
  // A branch-free pass first: a float is NaN or infinite exactly when its exponent bits are all
  // ones, so every element is finite when the largest of their bits without the sign is below
  // infinity's. Integer maxima in eight lanes, which the compiler vectorizes (a float sum, as
  // before, is one chain of dependent additions: 0.15 ms on a 416x256 output); the slow search
  // runs only on failure.
  constexpr std::uint32_t kMagnitude = 0x7FFFFFFFU;
  constexpr std::uint32_t kInfinityBits = 0x7F800000U;
  constexpr std::size_t kLanes = 8;
  std::array<std::uint32_t, kLanes> largest{};
  const std::size_t whole = values.size() / kLanes * kLanes;
  for (std::size_t i = 0; i < whole; i += kLanes) {
    for (std::size_t k = 0; k < kLanes; ++k) {
      largest[k] = std::max(largest[k], std::bit_cast<std::uint32_t>(values[i + k]) & kMagnitude);
    }
  }
  for (std::size_t i = whole; i < values.size(); ++i) {
    largest[0] = std::max(largest[0], std::bit_cast<std::uint32_t>(values[i]) & kMagnitude);
  }
  if (*std::max_element(largest.begin(), largest.end()) < kInfinityBits) return {};
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
