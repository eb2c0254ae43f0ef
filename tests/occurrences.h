#pragma once

#include <cstddef>
#include <string_view>

namespace vigil::testing {

// How often `needle` occurs in `text` (a log: lines said once per state change, not per frame).
inline std::size_t occurrences(std::string_view text, std::string_view needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string_view::npos; at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

}  // namespace vigil::testing
