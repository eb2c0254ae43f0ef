// Fuzzes the rewrite that frees an ONNX model's declared spatial size (onnx_free_size.h): any
// bytes must give a model or an error, and a model it gave must be freed again to itself (its
// sizes are symbolic already, its value_info gone): a rewrite that read its own output
// differently would have misread the protobuf.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "detector/backends/onnx_free_size.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto freed = vigil::freeSpatialSize(bytes, "fuzz.onnx");
  if (!freed) return 0;
  auto again = vigil::freeSpatialSize(*freed, "fuzz.onnx");
  if (!again || *again != *freed) std::abort();
  return 0;
}
