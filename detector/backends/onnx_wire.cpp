#include "detector/backends/onnx_wire.h"

#include <algorithm>

namespace vigil::onnx_wire {

namespace {

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

}  // namespace

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
        f.value = value;
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

std::vector<std::int64_t> readInts(const std::vector<Field>& fields, std::uint32_t number) {
  std::vector<std::int64_t> values;
  for (const Field& f : fields) {
    if (f.number != number) continue;
    if (f.wire == kVarint) values.push_back(static_cast<std::int64_t>(f.value));
    if (f.wire != kLength) continue;
    std::string_view packed = f.payload;
    std::uint64_t v = 0;
    while (!packed.empty() && readVarint(packed, v)) values.push_back(static_cast<std::int64_t>(v));
  }
  return values;
}

std::string_view readString(const std::vector<Field>& fields, std::uint32_t number) {
  std::string_view last;
  for (const Field& f : fields) {
    if (f.number == number && f.wire == kLength) last = f.payload;
  }
  return last;
}

void writeVarint(std::string& out, std::uint64_t value) {
  while (value >= 0x80U) {
    out.push_back(static_cast<char>((value & 0x7FU) | 0x80U));
    value >>= 7U;
  }
  out.push_back(static_cast<char>(value));
}

void writeVarintField(std::string& out, std::uint32_t number, std::uint64_t value) {
  writeVarint(out, (static_cast<std::uint64_t>(number) << 3U) | kVarint);
  writeVarint(out, value);
}

void writeLength(std::string& out, std::uint32_t number, std::string_view payload) {
  writeVarint(out, (static_cast<std::uint64_t>(number) << 3U) | kLength);
  writeVarint(out, payload.size());
  out.append(payload);
}

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

}  // namespace vigil::onnx_wire
