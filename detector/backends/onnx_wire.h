#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vigil::onnx_wire {

// Protocol buffers' wire format (protobuf.dev, "Encoding"), as much of it as the in-memory
// rewrites of an ONNX model need (onnx_free_size, onnx_focus_stem): a message is a sequence of
// fields, each a key (field number << 3 | wire type) and its value.
constexpr std::uint32_t kVarint = 0;
constexpr std::uint32_t kFixed64 = 1;
constexpr std::uint32_t kLength = 2;
constexpr std::uint32_t kFixed32 = 5;

// onnx.proto's field numbers (and the enum values) the rewrites read and write.
constexpr std::uint32_t kModelGraph = 7;           // ModelProto.graph
constexpr std::uint32_t kGraphNode = 1;            // GraphProto.node
constexpr std::uint32_t kGraphInitializer = 5;     // GraphProto.initializer
constexpr std::uint32_t kGraphInput = 11;          // GraphProto.input
constexpr std::uint32_t kGraphOutput = 12;         // GraphProto.output
constexpr std::uint32_t kGraphValueInfo = 13;      // GraphProto.value_info
constexpr std::uint32_t kValueInfoName = 1;        // ValueInfoProto.name
constexpr std::uint32_t kNodeInput = 1;            // NodeProto.input
constexpr std::uint32_t kNodeOutput = 2;           // NodeProto.output
constexpr std::uint32_t kNodeName = 3;             // NodeProto.name
constexpr std::uint32_t kNodeOpType = 4;           // NodeProto.op_type
constexpr std::uint32_t kNodeAttribute = 5;        // NodeProto.attribute
constexpr std::uint32_t kNodeDomain = 7;           // NodeProto.domain
constexpr std::uint32_t kAttributeName = 1;        // AttributeProto.name
constexpr std::uint32_t kAttributeInt = 3;         // AttributeProto.i
constexpr std::uint32_t kAttributeInts = 8;        // AttributeProto.ints
constexpr std::uint32_t kAttributeType = 20;       // AttributeProto.type
constexpr std::uint64_t kAttributeTypeInt = 2;     // AttributeProto.INT
constexpr std::uint64_t kAttributeTypeInts = 7;    // AttributeProto.INTS
constexpr std::uint32_t kTensorDims = 1;           // TensorProto.dims
constexpr std::uint32_t kTensorDataType = 2;       // TensorProto.data_type
constexpr std::uint32_t kTensorFloatData = 4;      // TensorProto.float_data
constexpr std::uint32_t kTensorInt64Data = 7;      // TensorProto.int64_data
constexpr std::uint32_t kTensorName = 8;           // TensorProto.name
constexpr std::uint32_t kTensorRawData = 9;        // TensorProto.raw_data
constexpr std::uint32_t kTensorDataLocation = 14;  // TensorProto.data_location (external)
constexpr std::uint64_t kTensorTypeFloat = 1;      // TensorProto.FLOAT
constexpr std::uint64_t kTensorTypeInt64 = 7;      // TensorProto.INT64
constexpr std::uint32_t kValueInfoType = 2;        // ValueInfoProto.type
constexpr std::uint32_t kTypeTensor = 1;           // TypeProto.tensor_type
constexpr std::uint32_t kTensorShape = 2;          // TypeProto.Tensor.shape
constexpr std::uint32_t kShapeDim = 1;             // TensorShapeProto.dim
constexpr std::uint32_t kDimensionParam = 2;       // TensorShapeProto.Dimension.dim_param

struct Field {
  std::uint32_t number = 0;
  std::uint32_t wire = 0;
  std::string_view whole;    // key and value, as they are in the message
  std::string_view payload;  // a length-delimited field's value
  std::uint64_t value = 0;   // a varint field's value
};

// The message's fields in order; nullopt when the bytes are not a protobuf message.
std::optional<std::vector<Field>> readFields(std::string_view message);

// A repeated int64 field's values, packed or not (onnx.proto is proto2: writers differ).
std::vector<std::int64_t> readInts(const std::vector<Field>& fields, std::uint32_t number);

// The last length-delimited `number` field's payload; empty when absent.
std::string_view readString(const std::vector<Field>& fields, std::uint32_t number);

void writeVarint(std::string& out, std::uint64_t value);
void writeVarintField(std::string& out, std::uint32_t number, std::uint64_t value);
void writeLength(std::string& out, std::uint32_t number, std::string_view payload);

// What becomes of a field: its new value; an empty inner optional to leave it out; or an empty
// outer one when it cannot be read, which fails the whole rewrite.
using Rewritten = std::optional<std::optional<std::string>>;
using Change = std::function<Rewritten(const Field&)>;

// `message` with each length-delimited field `change` is asked about (`numbers`) replaced by
// what it returns; every other field as it was.
std::optional<std::string> rewrite(std::string_view message,
                                   std::initializer_list<std::uint32_t> numbers,
                                   const Change& change);

}  // namespace vigil::onnx_wire
