#pragma once

#include <cstddef>
#include <span>

#include "detector/model_manifest.h"
#include "detector/tensor.h"
#include "foundation/error.h"

namespace vigil {

// Conversions between the float32 NCHW tensors of the CPU stages and an NPU stage's buffers
// (layout NCHW, NHWC or YCXC8, see DeviceTensorSpec, or onnx: the ONNX tensor as it is, float32
// only; dtype float32, bf16, or int8/uint8 with q = round(x / scale) + zero point, saturated).
// Packing writes YCXC8's padding channels as zero bytes; unpacking skips them. Hot path: no
// allocation; a size mismatch is kInvalidArgument.

// `tensor` (NCHW, the ONNX shape) into `out` (exactly spec.byteSize() bytes).
Expected<void> packTensor(const Tensor& tensor, const DeviceTensorSpec& spec,
                          std::span<std::byte> out);

// `in` (spec.byteSize() bytes) into `tensor`, which must already have the ONNX NCHW shape.
Expected<void> unpackTensor(std::span<const std::byte> in, const DeviceTensorSpec& spec,
                            Tensor& tensor);

}  // namespace vigil
