#include "detector/npu/device_tensor.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace vigil {

namespace {

// Index of NCHW element (c, y, x) of image 0 in the device layout.
struct Layout {
  enum Order { kNchw, kNhwc, kYcxc8 };
  Order order;
  std::int64_t channels, height, width;

  std::size_t at(std::int64_t c, std::int64_t y, std::int64_t x) const {
    switch (order) {
      case kNhwc:
        return static_cast<std::size_t>((y * width + x) * channels + c);
      case kYcxc8:
        return static_cast<std::size_t>(((y * blocks() + c / 8) * width + x) * 8 + c % 8);
      case kNchw:
        break;
    }
    return static_cast<std::size_t>((c * height + y) * width + x);
  }
  std::int64_t blocks() const { return (channels + 7) / 8; }
  // YCXC8 with a channel count that is not a multiple of 8 stores padding channels.
  bool padded() const { return order == kYcxc8 && channels % 8 != 0; }
};

Layout::Order orderOf(const std::string& layout) {
  if (layout == "NHWC") return Layout::kNhwc;
  if (layout == "YCXC8") return Layout::kYcxc8;
  return Layout::kNchw;
}

std::uint16_t toBf16(float v) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  if (std::isnan(v)) return static_cast<std::uint16_t>((bits >> 16) | 0x40U);
  bits += 0x7FFFU + ((bits >> 16) & 1U);  // round to nearest even
  return static_cast<std::uint16_t>(bits >> 16);
}

float fromBf16(std::uint16_t h) {
  std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
  float v = 0;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

template <typename Int>
Int quantize(float v, float scale, int zeroPoint) {
  float q = std::nearbyint(v / scale) + static_cast<float>(zeroPoint);
  if (std::isnan(q)) q = static_cast<float>(zeroPoint);
  q = std::clamp(q, static_cast<float>(std::numeric_limits<Int>::min()),
                 static_cast<float>(std::numeric_limits<Int>::max()));
  return static_cast<Int>(q);
}

Expected<Layout> layoutOf(const Tensor& tensor, const DeviceTensorSpec& spec, std::size_t bytes) {
  // YCXC8's padding depends on C: the tensor must have the spec's very shape.
  if (tensor.shape.size() != 4 || tensor.shape[0] != 1 ||
      static_cast<std::int64_t>(tensor.data.size()) != spec.elementCount() ||
      bytes != spec.byteSize() || (spec.layout == "YCXC8" && tensor.shape != spec.shape)) {
    return makeError(ErrorCode::kInvalidArgument,
                     "tensor '{}': {} values and {} bytes do not match the device tensor ({} "
                     "values, {} bytes, batch 1)",
                     spec.name, tensor.data.size(), bytes, spec.elementCount(), spec.byteSize());
  }
  return Layout{orderOf(spec.layout), tensor.shape[1], tensor.shape[2], tensor.shape[3]};
}

template <typename Fn>
void forEach(const Layout& l, Fn&& fn) {
  std::size_t i = 0;
  for (std::int64_t c = 0; c < l.channels; ++c) {
    for (std::int64_t y = 0; y < l.height; ++y) {
      for (std::int64_t x = 0; x < l.width; ++x) fn(i++, l.at(c, y, x));
    }
  }
}

// Layout "onnx": the ONNX tensor as it is, any rank, float32 (the Vitis AI runtime's buffers).
Expected<void> copyAsIs(std::span<const std::byte> from, std::span<std::byte> to,
                        const DeviceTensorSpec& spec) {
  if (spec.dtype != "float32" || from.size() != to.size()) {
    return makeError(ErrorCode::kInvalidArgument,
                     "tensor '{}': layout onnx copies float32 as it is; {} bytes into {} ({})",
                     spec.name, from.size(), to.size(), spec.dtype);
  }
  std::memcpy(to.data(), from.data(), from.size());
  return {};
}

}  // namespace

Expected<void> packTensor(const Tensor& tensor, const DeviceTensorSpec& spec,
                          std::span<std::byte> out) {
  if (spec.layout == "onnx") return copyAsIs(std::as_bytes(std::span(tensor.data)), out, spec);
  auto layout = layoutOf(tensor, spec, out.size());
  if (!layout) return tl::unexpected(layout.error());
  const float* src = tensor.data.data();
  if (layout->padded()) std::memset(out.data(), 0, out.size());
  if (spec.dtype == "float32") {
    auto* dst = reinterpret_cast<float*>(out.data());
    if (layout->order == Layout::kNchw) {
      std::memcpy(dst, src, out.size());
    } else {
      forEach(*layout, [&](std::size_t i, std::size_t d) { dst[d] = src[i]; });
    }
  } else if (spec.dtype == "bf16") {
    auto* dst = reinterpret_cast<std::uint16_t*>(out.data());
    forEach(*layout, [&](std::size_t i, std::size_t d) { dst[d] = toBf16(src[i]); });
  } else if (spec.dtype == "int8") {
    auto* dst = reinterpret_cast<std::int8_t*>(out.data());
    forEach(*layout, [&](std::size_t i, std::size_t d) {
      dst[d] = quantize<std::int8_t>(src[i], spec.scale, spec.zeroPoint);
    });
  } else if (spec.dtype == "uint8") {
    auto* dst = reinterpret_cast<std::uint8_t*>(out.data());
    forEach(*layout, [&](std::size_t i, std::size_t d) {
      dst[d] = quantize<std::uint8_t>(src[i], spec.scale, spec.zeroPoint);
    });
  } else {
    return makeError(ErrorCode::kUnsupported, "tensor '{}': dtype {} cannot be packed", spec.name,
                     spec.dtype);
  }
  return {};
}

Expected<void> unpackTensor(std::span<const std::byte> in, const DeviceTensorSpec& spec,
                            Tensor& tensor) {
  if (spec.layout == "onnx")
    return copyAsIs(in, std::as_writable_bytes(std::span(tensor.data)), spec);
  auto layout = layoutOf(tensor, spec, in.size());
  if (!layout) return tl::unexpected(layout.error());
  float* dst = tensor.data.data();
  const float scale = spec.scale;
  const auto zero = static_cast<float>(spec.zeroPoint);
  if (spec.dtype == "float32") {
    const auto* src = reinterpret_cast<const float*>(in.data());
    if (layout->order == Layout::kNchw) {
      std::memcpy(dst, src, in.size());
    } else {
      forEach(*layout, [&](std::size_t i, std::size_t d) { dst[i] = src[d]; });
    }
  } else if (spec.dtype == "bf16") {
    const auto* src = reinterpret_cast<const std::uint16_t*>(in.data());
    forEach(*layout, [&](std::size_t i, std::size_t d) { dst[i] = fromBf16(src[d]); });
  } else if (spec.dtype == "int8") {
    const auto* src = reinterpret_cast<const std::int8_t*>(in.data());
    forEach(*layout, [&](std::size_t i, std::size_t d) {
      dst[i] = (static_cast<float>(src[d]) - zero) * scale;
    });
  } else if (spec.dtype == "uint8") {
    const auto* src = reinterpret_cast<const std::uint8_t*>(in.data());
    forEach(*layout, [&](std::size_t i, std::size_t d) {
      dst[i] = (static_cast<float>(src[d]) - zero) * scale;
    });
  } else {
    return makeError(ErrorCode::kUnsupported, "tensor '{}': dtype {} cannot be unpacked", spec.name,
                     spec.dtype);
  }
  return {};
}

}  // namespace vigil
