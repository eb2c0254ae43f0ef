#include "detector/backends/onnx_free_size.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "detector/backends/onnx_wire.h"

namespace vigil {

namespace {

using namespace onnx_wire;

// A shape with the dimensions `symbol` names (by index and rank) made symbolic under that name;
// the others as they were.
std::optional<std::string> freeDimensions(
    std::string_view shape, const std::function<std::string(int index, int rank)>& symbol) {
  auto fields = readFields(shape);
  if (!fields) return std::nullopt;
  int rank = 0;
  for (const Field& f : *fields) rank += f.number == kShapeDim && f.wire == kLength ? 1 : 0;
  int index = 0;
  return rewrite(shape, {kShapeDim}, [&](const Field& dim) -> Rewritten {
    const std::string name = symbol(index++, rank);
    if (name.empty()) return std::optional<std::string>(std::string(dim.payload));
    std::string dimension;
    writeLength(dimension, kDimensionParam, name);
    return std::optional<std::string>(std::move(dimension));
  });
}

// A graph input's or output's declaration with its shape's size dimensions free (see the header).
std::optional<std::string> freeValueInfo(std::string_view valueInfo, bool input) {
  auto fields = readFields(valueInfo);
  if (!fields) return std::nullopt;
  const std::string name(readString(*fields, kValueInfoName));
  auto symbol = [&](int index, int rank) -> std::string {
    if (input) {
      if (rank != 4 || index < 2) return {};
      return name + (index == 2 ? "_height" : "_width");
    }
    if (index == 0 || index == rank - 1) return {};
    return name + "_" + std::to_string(index);
  };
  auto inner = [](std::uint32_t number, auto next) {
    return [number, next](std::string_view message) {
      return rewrite(message, {number}, [&](const Field& f) -> Rewritten {
        auto changed = next(f.payload);
        if (!changed) return std::nullopt;
        return std::optional<std::string>(std::move(*changed));
      });
    };
  };
  auto shape = [&](std::string_view s) { return freeDimensions(s, symbol); };
  return inner(kValueInfoType, inner(kTypeTensor, inner(kTensorShape, shape)))(valueInfo);
}

}  // namespace

Expected<std::string> freeSpatialSize(std::string_view model, const std::string& where) {
  bool graphs = false;
  auto rewritten = rewrite(model, {kModelGraph}, [&](const Field& graph) -> Rewritten {
    graphs = true;
    auto changed = rewrite(graph.payload, {kGraphInput, kGraphOutput, kGraphValueInfo},
                           [](const Field& f) -> Rewritten {
                             if (f.number == kGraphValueInfo) return std::optional<std::string>();
                             auto declared = freeValueInfo(f.payload, f.number == kGraphInput);
                             if (!declared) return std::nullopt;
                             return std::optional<std::string>(std::move(*declared));
                           });
    if (!changed) return std::nullopt;
    return std::optional<std::string>(std::move(*changed));
  });
  if (!rewritten || !graphs) {
    return makeError(ErrorCode::kInvalidData,
                     "{}: not an ONNX model (its protobuf has no readable graph)", where);
  }
  return std::move(*rewritten);
}

}  // namespace vigil
