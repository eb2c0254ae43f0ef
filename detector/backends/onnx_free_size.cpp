#include "detector/backends/onnx_free_size.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace vigil {

namespace {

// Protocol buffers' wire format (protobuf.dev, "Encoding"): a message is a sequence of fields,
// each a key (field number << 3 | wire type) and its value.
constexpr std::uint32_t kVarint = 0;
constexpr std::uint32_t kFixed64 = 1;
constexpr std::uint32_t kLength = 2;
constexpr std::uint32_t kFixed32 = 5;

// onnx.proto's field numbers on the way from the model to a dimension.
constexpr std::uint32_t kModelGraph = 7;       // ModelProto.graph
constexpr std::uint32_t kGraphInput = 11;      // GraphProto.input
constexpr std::uint32_t kGraphOutput = 12;     // GraphProto.output
constexpr std::uint32_t kGraphValueInfo = 13;  // GraphProto.value_info
constexpr std::uint32_t kValueInfoName = 1;    // ValueInfoProto.name
constexpr std::uint32_t kValueInfoType = 2;    // ValueInfoProto.type
constexpr std::uint32_t kTypeTensor = 1;       // TypeProto.tensor_type
constexpr std::uint32_t kTensorShape = 2;      // TypeProto.Tensor.shape
constexpr std::uint32_t kShapeDim = 1;         // TensorShapeProto.dim
constexpr std::uint32_t kDimensionParam = 2;   // TensorShapeProto.Dimension.dim_param

struct Field {
  std::uint32_t number = 0;
  std::uint32_t wire = 0;
  std::string_view whole;    // key and value, as they are in the message
  std::string_view payload;  // a length-delimited field's value
};

bool readVarint(std::string_view& in, std::uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64 && !in.empty(); shift += 7) {
    const auto byte = static_cast<std::uint8_t>(in.front());
    in.remove_prefix(1);
    value |= static_cast<std::uint64_t>(byte & 0x7FU) << shift;
    if ((byte & 0x80U) == 0) return true;
  }
  return false;
}

bool skip(std::string_view& in, std::size_t count) {
  if (in.size() < count) return false;
  in.remove_prefix(count);
  return true;
}

// The message's fields in order; nullopt when the bytes are not a protobuf message.
std::optional<std::vector<Field>> readFields(std::string_view message) {
  std::vector<Field> fields;
  while (!message.empty()) {
    const char* start = message.data();
    std::uint64_t key = 0;
    std::uint64_t value = 0;
    if (!readVarint(message, key)) return std::nullopt;
    Field f;
    f.number = static_cast<std::uint32_t>(key >> 3U);
    f.wire = static_cast<std::uint32_t>(key & 7U);
    bool ok = false;
    switch (f.wire) {
      case kVarint:
        ok = readVarint(message, value);
        break;
      case kFixed64:
        ok = skip(message, 8);
        break;
      case kFixed32:
        ok = skip(message, 4);
        break;
      case kLength:
        ok = readVarint(message, value) && value <= message.size();
        if (ok) {
          f.payload = message.substr(0, static_cast<std::size_t>(value));
          message.remove_prefix(static_cast<std::size_t>(value));
        }
        break;
      default:
        break;  // groups (long deprecated) or not protobuf
    }
    if (!ok) return std::nullopt;
    f.whole = std::string_view(start, static_cast<std::size_t>(message.data() - start));
    fields.push_back(f);
  }
  return fields;
}

void writeVarint(std::string& out, std::uint64_t value) {
  while (value >= 0x80U) {
    out.push_back(static_cast<char>((value & 0x7FU) | 0x80U));
    value >>= 7U;
  }
  out.push_back(static_cast<char>(value));
}

void writeLength(std::string& out, std::uint32_t number, std::string_view payload) {
  writeVarint(out, (static_cast<std::uint64_t>(number) << 3U) | kLength);
  writeVarint(out, payload.size());
  out.append(payload);
}

// What becomes of a field: its new value; an empty inner optional to leave it out; or an empty
// outer one when it cannot be read, which fails the whole rewrite.
using Rewritten = std::optional<std::optional<std::string>>;
using Change = std::function<Rewritten(const Field&)>;

// `message` with each length-delimited field `change` is asked about (`numbers`) replaced by
// what it returns; every other field as it was.
std::optional<std::string> rewrite(std::string_view message,
                                   std::initializer_list<std::uint32_t> numbers,
                                   const Change& change) {
  auto fields = readFields(message);
  if (!fields) return std::nullopt;
  std::string out;
  out.reserve(message.size());
  for (const Field& f : *fields) {
    const bool asked =
        f.wire == kLength && std::find(numbers.begin(), numbers.end(), f.number) != numbers.end();
    if (!asked) {
      out.append(f.whole);
      continue;
    }
    auto changed = change(f);
    if (!changed) return std::nullopt;
    if (*changed) writeLength(out, f.number, **changed);
  }
  return out;
}

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
  std::string name;
  for (const Field& f : *fields) {
    if (f.number == kValueInfoName && f.wire == kLength) name = f.payload;
  }
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
