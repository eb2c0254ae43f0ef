// Fuzzes the rewrite that fuses YOLOX's Focus stem into one convolution (onnx_focus_stem.h):
// any bytes must give a model or nothing, and a model it gave has no stem left to fuse (its
// Slices and Concat are gone): a rewrite that found one again would have misread its own output.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "detector/backends/onnx_focus_stem.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto fused = vigil::fuseFocusStem(bytes);
  if (!fused) return 0;
  if (vigil::fuseFocusStem(*fused)) std::abort();
  return 0;
}
