#pragma once

#include <span>

#include "foundation/error.h"

namespace vigil {

// Every inference output passes through here before it is decoded: a runtime that reports
// success but returns NaN or Inf (a known NPU failure mode) yields kInvalidOutput naming the
// first bad element, never a detection list.
Expected<void> checkFinite(std::span<const float> values, std::string_view what);

// Largest absolute difference between two equally long tensors (NaN if either has a NaN, so a
// tolerance check on the result fails).
float maxAbsDiff(std::span<const float> a, std::span<const float> b);

}  // namespace vigil
