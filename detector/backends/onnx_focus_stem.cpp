#include "detector/backends/onnx_focus_stem.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <type_traits>
#include <vector>

#include "detector/backends/onnx_wire.h"

namespace vigil {

namespace {

using namespace onnx_wire;

// A stem's convolution is small: a picture's channels in, a few dozen filters out; anything
// larger is not matched (and not allocated for).
constexpr std::int64_t kMaxChannels = 16;
constexpr std::int64_t kMaxFilters = 1024;

// A Slice's `ends` at least this large keeps the rest of the axis, as exporters write it.
constexpr std::int64_t kToTheEnd = std::int64_t{1} << 30;

struct Node {
  std::vector<std::string_view> inputs, outputs;
  std::string_view opType, domain;
  std::map<std::string_view, std::vector<std::int64_t>> ints;  // integer attributes by name
  bool otherAttributes = false;  // of another kind: a node that has them is not matched
};

std::optional<Node> readNode(std::string_view bytes) {
  auto fields = readFields(bytes);
  if (!fields) return std::nullopt;
  Node node;
  for (const Field& f : *fields) {
    if (f.wire != kLength) continue;
    if (f.number == kNodeInput) node.inputs.push_back(f.payload);
    if (f.number == kNodeOutput) node.outputs.push_back(f.payload);
    if (f.number == kNodeOpType) node.opType = f.payload;
    if (f.number == kNodeDomain) node.domain = f.payload;
    if (f.number != kNodeAttribute) continue;
    auto attribute = readFields(f.payload);
    if (!attribute) return std::nullopt;
    const auto type = std::find_if(attribute->begin(), attribute->end(), [](const Field& a) {
      return a.number == kAttributeType && a.wire == kVarint;
    });
    const std::string_view name = readString(*attribute, kAttributeName);
    if (type != attribute->end() && type->value == kAttributeTypeInt) {
      node.ints[name] = readInts(*attribute, kAttributeInt);
    } else if (type != attribute->end() && type->value == kAttributeTypeInts) {
      node.ints[name] = readInts(*attribute, kAttributeInts);
    } else {
      node.otherAttributes = true;
    }
  }
  return node;
}

struct Initializer {
  std::vector<std::int64_t> dims;
  std::uint64_t type = 0;
  std::vector<Field> fields;
  bool external = false;
};

// The values of a tensor of `count` elements of `T` (raw_data or the typed field), nullopt when
// it holds another number.
template <typename T>
std::optional<std::vector<T>> values(const Initializer& tensor, std::size_t count,
                                     std::uint32_t typedField) {
  if (tensor.external) return std::nullopt;
  const std::string_view raw = readString(tensor.fields, kTensorRawData);
  if constexpr (std::is_same_v<T, float>) {
    // float_data is packed in onnx.proto: the same little-endian bytes as raw_data.
    const std::string_view bytes = raw.empty() ? readString(tensor.fields, typedField) : raw;
    if (bytes.size() != count * sizeof(float)) return std::nullopt;
    std::vector<float> out(count);
    std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
  } else {
    if (!raw.empty()) {
      if (raw.size() != count * sizeof(T)) return std::nullopt;
      std::vector<T> out(count);
      std::memcpy(out.data(), raw.data(), raw.size());
      return out;
    }
    auto ints = readInts(tensor.fields, typedField);
    if (ints.size() != count) return std::nullopt;
    return std::vector<T>(ints.begin(), ints.end());
  }
}

struct Graph {
  std::vector<Field> fields;
  std::vector<Node> nodes;
  std::vector<std::size_t> nodeField;  // the field of each node
  std::map<std::string_view, Initializer> initializers;
  std::set<std::string_view> inputs;
  std::map<std::string_view, std::size_t> producer;  // tensor -> node
  std::map<std::string_view, int> uses;              // tensor -> node inputs and graph outputs

  std::optional<std::int64_t> scalar(std::string_view name) const {
    auto it = initializers.find(name);
    if (it == initializers.end() || it->second.type != kTensorTypeInt64) return std::nullopt;
    auto v = values<std::int64_t>(it->second, 1, kTensorInt64Data);
    return v ? std::optional<std::int64_t>(v->front()) : std::nullopt;
  }
  const Node* producedBy(std::string_view tensor, std::string_view opType) const {
    auto it = producer.find(tensor);
    if (it == producer.end() || nodes[it->second].opType != opType) return nullptr;
    return &nodes[it->second];
  }
};

std::optional<Graph> readGraph(std::string_view bytes) {
  Graph g;
  auto fields = readFields(bytes);
  if (!fields) return std::nullopt;
  g.fields = std::move(*fields);
  for (std::size_t i = 0; i < g.fields.size(); ++i) {
    const Field& f = g.fields[i];
    if (f.wire != kLength) continue;
    if (f.number == kGraphNode) {
      auto node = readNode(f.payload);
      if (!node) return std::nullopt;
      for (std::string_view out : node->outputs) g.producer[out] = g.nodes.size();
      for (std::string_view in : node->inputs) ++g.uses[in];
      g.nodes.push_back(std::move(*node));
      g.nodeField.push_back(i);
    } else if (f.number == kGraphInitializer) {
      auto tensor = readFields(f.payload);
      if (!tensor) return std::nullopt;
      Initializer init;
      init.dims = readInts(*tensor, kTensorDims);
      for (const Field& t : *tensor) {
        if (t.number == kTensorDataType && t.wire == kVarint) init.type = t.value;
        if (t.number == kTensorDataLocation && t.wire == kVarint) init.external = t.value != 0;
      }
      init.fields = std::move(*tensor);
      g.initializers[readString(init.fields, kTensorName)] = std::move(init);
    } else if (f.number == kGraphInput || f.number == kGraphOutput) {
      auto info = readFields(f.payload);
      if (!info) return std::nullopt;
      const std::string_view name = readString(*info, kValueInfoName);
      if (f.number == kGraphInput) g.inputs.insert(name);
      if (f.number == kGraphOutput) ++g.uses[name];
    }
  }
  return g;
}

// The stem found: the nodes it replaces, its picture, its phases in the Concat's order.
struct Stem {
  std::set<std::size_t> nodes;  // Slices and Concat
  std::size_t conv = 0;
  std::string_view picture;
  std::vector<std::array<int, 2>> phases;  // (row, column) of each Concat input
};

// (start) of a Slice of step 2 over the whole of `axis` of `data`, or nullopt.
std::optional<int> phaseOf(const Graph& g, const Node& slice, std::int64_t axis) {
  if (slice.inputs.size() != 5 || slice.otherAttributes || !slice.ints.empty()) return std::nullopt;
  auto start = g.scalar(slice.inputs[1]);
  auto end = g.scalar(slice.inputs[2]);
  auto sliceAxis = g.scalar(slice.inputs[3]);
  auto step = g.scalar(slice.inputs[4]);
  if (!start || !end || !sliceAxis || !step || *sliceAxis != axis || *step != 2 ||
      *end < kToTheEnd || (*start != 0 && *start != 1)) {
    return std::nullopt;
  }
  return static_cast<int>(*start);
}

std::optional<Stem> findStem(const Graph& g) {
  for (std::size_t c = 0; c < g.nodes.size(); ++c) {
    const Node& conv = g.nodes[c];
    if (conv.opType != "Conv" || conv.inputs.size() < 2) continue;
    const Node* concat = g.producedBy(conv.inputs[0], "Concat");
    if (concat == nullptr || concat->inputs.size() != 4 || g.uses.at(conv.inputs[0]) != 1 ||
        concat->ints.size() != 1 || concat->ints.count("axis") == 0 ||
        concat->ints.at("axis") != std::vector<std::int64_t>{1}) {
      continue;
    }
    Stem stem;
    stem.conv = c;
    stem.nodes.insert(g.producer.at(conv.inputs[0]));
    for (std::string_view part : concat->inputs) {
      const Node* cols = g.producedBy(part, "Slice");
      if (cols == nullptr || cols->inputs.size() != 5) break;
      const Node* rows = g.producedBy(cols->inputs[0], "Slice");
      if (rows == nullptr || g.uses.at(part) != 1 || g.uses.at(cols->inputs[0]) != 1) break;
      auto a = phaseOf(g, *rows, 2);
      auto b = phaseOf(g, *cols, 3);
      if (!a || !b || g.inputs.count(rows->inputs[0]) == 0) break;
      if (!stem.picture.empty() && stem.picture != rows->inputs[0]) break;
      stem.picture = rows->inputs[0];
      stem.phases.push_back({*a, *b});
      stem.nodes.insert(g.producer.at(part));
      stem.nodes.insert(g.producer.at(cols->inputs[0]));
    }
    auto sorted = stem.phases;
    std::sort(sorted.begin(), sorted.end());
    if (stem.phases.size() == 4 &&
        std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end()) {
      return stem;
    }
  }
  return std::nullopt;
}

// The 3x3 convolution's weights [O, 4C, 3, 3] as a 6x6 one's [O, C, 6, 6]; nullopt unless the
// convolution is exactly the stem's (stride 1, padding 1, no groups or dilation).
std::optional<std::vector<float>> stemWeights(const Graph& g, const Stem& stem,
                                              std::vector<std::int64_t>& dims) {
  const Node& conv = g.nodes[stem.conv];
  const std::map<std::string_view, std::vector<std::int64_t>> expected = {{"kernel_shape", {3, 3}},
                                                                          {"strides", {1, 1}},
                                                                          {"pads", {1, 1, 1, 1}},
                                                                          {"dilations", {1, 1}},
                                                                          {"group", {1}}};
  if (conv.otherAttributes || conv.ints.count("kernel_shape") == 0) return std::nullopt;
  for (const auto& [name, v] : conv.ints) {
    auto it = expected.find(name);
    if (it == expected.end() || it->second != v) return std::nullopt;
  }
  auto w = g.initializers.find(conv.inputs[1]);
  if (w == g.initializers.end() || w->second.type != kTensorTypeFloat ||
      w->second.dims.size() != 4 || w->second.dims[1] % 4 != 0 || w->second.dims[2] != 3 ||
      w->second.dims[3] != 3 || w->second.dims[0] <= 0 || w->second.dims[0] > kMaxFilters ||
      w->second.dims[1] <= 0 || w->second.dims[1] > 4 * kMaxChannels) {
    return std::nullopt;
  }
  const auto out = static_cast<std::size_t>(w->second.dims[0]);
  const auto in = static_cast<std::size_t>(w->second.dims[1]);
  const std::size_t channels = in / 4;
  auto weights = values<float>(w->second, out * in * 9, kTensorFloatData);
  if (!weights) return std::nullopt;
  std::vector<float> stemmed(out * channels * 36, 0.0F);
  for (std::size_t o = 0; o < out; ++o) {
    for (std::size_t k = 0; k < 4; ++k) {
      const auto [a, b] = stem.phases[k];
      for (std::size_t c = 0; c < channels; ++c) {
        for (std::size_t di = 0; di < 3; ++di) {
          for (std::size_t dj = 0; dj < 3; ++dj) {
            const std::size_t row = 2 * di + static_cast<std::size_t>(a);
            const std::size_t col = 2 * dj + static_cast<std::size_t>(b);
            stemmed[((o * channels + c) * 6 + row) * 6 + col] =
                (*weights)[((o * in + k * channels + c) * 3 + di) * 3 + dj];
          }
        }
      }
    }
  }
  dims = {w->second.dims[0], static_cast<std::int64_t>(channels), 6, 6};
  return stemmed;
}

void writeIntsAttribute(std::string& node, std::string_view name,
                        const std::vector<std::int64_t>& ints) {
  std::string attribute;
  writeLength(attribute, kAttributeName, name);
  for (std::int64_t v : ints)
    writeVarintField(attribute, kAttributeInts, static_cast<std::uint64_t>(v));
  writeVarintField(attribute, kAttributeType, kAttributeTypeInts);
  writeLength(node, kNodeAttribute, attribute);
}

// The Conv node that replaces the stem: the picture in, the 6x6 weights `weightName`, the 3x3
// convolution's bias and outputs.
std::string fusedConvNode(const Node& conv, std::string_view picture, std::string_view weightName) {
  std::string node;
  writeLength(node, kNodeInput, picture);
  writeLength(node, kNodeInput, weightName);
  if (conv.inputs.size() > 2) writeLength(node, kNodeInput, conv.inputs[2]);
  for (std::string_view out : conv.outputs) writeLength(node, kNodeOutput, out);
  writeLength(node, kNodeName, "focus_stem_6x6");
  writeLength(node, kNodeOpType, "Conv");
  writeIntsAttribute(node, "kernel_shape", {6, 6});
  writeIntsAttribute(node, "strides", {2, 2});
  writeIntsAttribute(node, "pads", {2, 2, 2, 2});
  writeIntsAttribute(node, "dilations", {1, 1});
  if (!conv.domain.empty()) writeLength(node, kNodeDomain, conv.domain);
  return node;
}

// The 6x6 weights as a float initializer named `name`.
std::string weightsInitializer(std::string_view name, const std::vector<std::int64_t>& dims,
                               const std::vector<float>& weights) {
  std::string tensor;
  for (std::int64_t d : dims) writeVarintField(tensor, kTensorDims, static_cast<std::uint64_t>(d));
  writeVarintField(tensor, kTensorDataType, kTensorTypeFloat);
  writeLength(tensor, kTensorName, name);
  writeLength(tensor, kTensorRawData,
              std::string_view(reinterpret_cast<const char*>(weights.data()),
                               weights.size() * sizeof(float)));
  return tensor;
}

// What only the replaced nodes (stem.nodes and the convolution) used goes with them: their
// outputs' recorded shapes, and the initializers (and the graph inputs an old exporter lists
// them as) no kept node reads. The convolution's outputs and bias stay: the new node has them.
std::set<std::string_view> goneWithStem(const Graph& g, const Stem& stem) {
  const Node& conv = g.nodes[stem.conv];
  std::set<std::size_t> replaced = stem.nodes;
  replaced.insert(stem.conv);
  std::set<std::string_view> gone;
  std::map<std::string_view, int> dropped;  // tensor -> uses by replaced nodes
  for (std::size_t n : replaced) {
    for (std::string_view out : g.nodes[n].outputs) gone.insert(out);
    for (std::string_view in : g.nodes[n].inputs) ++dropped[in];
  }
  for (const auto& [name, count] : dropped) {
    if (g.initializers.count(name) != 0 && g.uses.at(name) == count) gone.insert(name);
  }
  for (std::string_view out : conv.outputs) gone.erase(out);
  for (std::size_t i = 2; i < conv.inputs.size(); ++i) gone.erase(conv.inputs[i]);  // the bias
  return gone;
}

std::optional<std::string> fuseGraph(std::string_view bytes) {
  auto g = readGraph(bytes);
  if (!g) return std::nullopt;
  // Weights in files beside the model are found from the model's path, which a model loaded
  // from memory does not have: such a model runs from its file, as it is.
  for (const auto& [name, init] : g->initializers) {
    if (init.external) return std::nullopt;
  }
  auto stem = findStem(*g);
  if (!stem) return std::nullopt;
  std::vector<std::int64_t> dims;
  auto weights = stemWeights(*g, *stem, dims);
  if (!weights) return std::nullopt;
  const Node& conv = g->nodes[stem->conv];
  const std::string weightName = std::string(conv.inputs[1]) + "_focus_stem_6x6";
  if (g->initializers.count(weightName) != 0) return std::nullopt;

  const std::set<std::string_view> gone = goneWithStem(*g, *stem);
  std::set<std::size_t> skipped;
  for (std::size_t n : stem->nodes) skipped.insert(g->nodeField[n]);
  std::string out;
  out.reserve(bytes.size());
  for (std::size_t i = 0; i < g->fields.size(); ++i) {
    const Field& f = g->fields[i];
    if (i == g->nodeField[stem->conv]) {
      writeLength(out, kGraphNode, fusedConvNode(conv, stem->picture, weightName));
      continue;
    }
    if (skipped.count(i) != 0) continue;
    if (f.wire == kLength &&
        (f.number == kGraphInitializer || f.number == kGraphInput || f.number == kGraphValueInfo)) {
      auto fields = readFields(f.payload);
      const std::uint32_t nameField = f.number == kGraphInitializer ? kTensorName : kValueInfoName;
      if (fields && gone.count(readString(*fields, nameField)) != 0) continue;
    }
    out.append(f.whole);
  }
  writeLength(out, kGraphInitializer, weightsInitializer(weightName, dims, *weights));
  return out;
}

}  // namespace

std::optional<std::string> fuseFocusStem(std::string_view model) {
  bool fused = false;
  auto rewritten = rewrite(model, {kModelGraph}, [&](const Field& graph) -> Rewritten {
    auto changed = fuseGraph(graph.payload);
    fused = fused || changed.has_value();
    return std::optional<std::string>(changed ? std::move(*changed) : std::string(graph.payload));
  });
  if (!rewritten || !fused) return std::nullopt;
  return rewritten;
}

}  // namespace vigil
