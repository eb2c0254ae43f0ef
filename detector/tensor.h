#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace vigil {

// A dense float32 tensor that owns its storage. Sized once (resize) and then reused frame after
// frame: the hot path writes into existing storage and never allocates.
struct Tensor {
  std::string name;
  std::vector<std::int64_t> shape;
  std::vector<float> data;

  void resize(std::vector<std::int64_t> newShape) {
    std::int64_t count = 1;
    for (std::int64_t d : newShape) count *= d;
    shape = std::move(newShape);
    data.resize(static_cast<std::size_t>(count));
  }
  std::span<const float> values() const { return data; }
  std::span<float> values() { return data; }
};

}  // namespace vigil
