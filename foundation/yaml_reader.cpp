#include "foundation/yaml_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tl/expected.hpp>
#include <vector>

namespace vigil {

namespace {

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return "nothing";
    case YAML::NodeType::Scalar:
      return fmt::format("'{}'", node.Scalar());
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Undefined:
      return "nothing";
  }
  return "something else";
}

// The text of a configuration or manifest file, read without being fooled by what a path can
// name: a directory, a FIFO or device, a file too large for yaml-cpp. Throws YamlError naming
// `path` and why.
std::string readConfigText(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(status)) {
    throw YamlError(fmt::format("{}: is a directory, not a YAML file", path));
  }
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    // A FIFO would block the open until a writer came; a device could be endless.
    throw YamlError(fmt::format("{}: not a regular file (a FIFO or device)", path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw YamlError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  // Read at most one byte more than allowed, so that a huge file (or an endless FIFO) is
  // refused after kMaxFileBytes instead of being parsed into gigabytes of nodes.
  constexpr std::size_t kMaxFileBytes = YamlReader::kMaxFileBytes;
  std::string text(kMaxFileBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxFileBytes) {
    std::error_code sizeError;
    const auto size = std::filesystem::file_size(path, sizeError);
    throw YamlError(fmt::format(
        "{}: {} bytes, more than the {} KiB a configuration or manifest "
        "may be (they are a few KiB); not read",
        path, sizeError ? "over " + std::to_string(kMaxFileBytes) : std::to_string(size),
        kMaxFileBytes / 1024));
  }
  if (in.bad()) throw YamlError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  return text;
}

}  // namespace

YamlReader YamlReader::fromFile(const std::string& path) {
  return fromString(readConfigText(path), path);
}

YamlReader YamlReader::fromString(const std::string& text, std::string displayName) {
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
    return YamlReader(root, std::move(displayName));
  } catch (const YAML::Exception& e) {
    throw YamlError(fmt::format("{}:{}:{}: invalid YAML: {}", displayName, e.mark.line + 1,
                                e.mark.column + 1, e.msg),
                    e.mark.line + 1, e.mark.column + 1);
  }
}

std::string YamlReader::describeLocation(const YAML::Node& at, std::string_view path,
                                         std::string_view reason) const {
  YAML::Mark mark = at.IsDefined() ? at.Mark() : YAML::Mark::null_mark();
  std::string where = mark.is_null()
                          ? fileName_
                          : fmt::format("{}:{}:{}", fileName_, mark.line + 1, mark.column + 1);
  if (path.empty()) return fmt::format("{}: {}", where, reason);
  return fmt::format("{}: {}: {}", where, path, reason);
}

void YamlReader::fail(const YAML::Node& at, std::string_view path, std::string_view reason) const {
  const YAML::Mark mark = at.IsDefined() ? at.Mark() : YAML::Mark::null_mark();
  const bool placed = !mark.is_null();  // a YamlError without a place says 0, 0
  throw YamlError(describeLocation(at, path, reason), placed ? mark.line + 1 : 0,
                  placed ? mark.column + 1 : 0);
}

void YamlReader::report(const YAML::Node& at, std::string_view path,
                        std::string_view reason) const {
  if (errors_ == nullptr) fail(at, path, reason);
  errors_->collect([&] { fail(at, path, reason); });
}

bool YamlReader::collect(const std::function<void()>& read) const {
  if (errors_ != nullptr) return errors_->collect(read);
  read();  // not collecting: its error propagates
  return true;
}

std::string YamlReader::join(std::string_view path, std::string_view key) {
  return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}

std::string YamlReader::index(std::string_view path, std::size_t i) {
  return fmt::format("{}[{}]", path, i);
}

void YamlReader::expectMap(const YAML::Node& node, std::string_view path) const {
  if (!node.IsMap()) fail(node, path, fmt::format("expected a mapping, got {}", describe(node)));
}

void YamlReader::expectSequence(const YAML::Node& node, std::string_view path) const {
  if (!node.IsSequence()) fail(node, path, fmt::format("expected a list, got {}", describe(node)));
}

namespace {

// The edits (insert, delete, replace one character, swap two neighbours) from `a` to `b`.
std::size_t editDistance(std::string_view a, std::string_view b) {
  const std::size_t width = b.size() + 1;
  std::vector<std::size_t> d((a.size() + 1) * width);
  auto at = [&](std::size_t i, std::size_t j) -> std::size_t& { return d[i * width + j]; };
  for (std::size_t i = 0; i <= a.size(); ++i) at(i, 0) = i;
  for (std::size_t j = 0; j <= b.size(); ++j) at(0, j) = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      at(i, j) = std::min(
          {at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        at(i, j) = std::min(at(i, j), at(i - 2, j - 2) + 1);
      }
    }
  }
  return at(a.size(), b.size());
}

// The allowed key a mistyped one most likely meant ("line" for "lines", "detect_fsp" for
// "detect_fps"): the nearest within a third of its length (at least one edit); empty if none.
std::string_view nearestKey(std::string_view key, std::initializer_list<std::string_view> allowed) {
  std::string_view best;
  std::size_t bestDistance = std::max<std::size_t>(1, key.size() / 3) + 1;
  for (std::string_view a : allowed) {
    const std::size_t d = editDistance(key, a);
    if (d < bestDistance) {
      best = a;
      bestDistance = d;
    }
  }
  return best;
}

// What fail() says of a key not in `allowed`: the one it most likely meant, and the keys allowed.
std::string unknownKeyReason(std::string_view key,
                             std::initializer_list<std::string_view> allowed) {
  std::string list;
  for (std::string_view a : allowed) list += fmt::format("{}{}", list.empty() ? "" : ", ", a);
  const std::string_view near = nearestKey(key, allowed);
  return fmt::format("unknown key{} (allowed here: {})",
                     near.empty() ? "" : fmt::format("; did you mean '{}'?", near), list);
}

}  // namespace

void YamlReader::rejectUnknownKeys(const YAML::Node& map, std::string_view path,
                                   std::initializer_list<std::string_view> allowed) const {
  expectMap(map, path);
  std::vector<std::string> seen;
  for (const auto& item : map) {
    std::string key = item.first.Scalar();
    // yaml-cpp keeps duplicate keys and answers lookups with the first: say so instead.
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      report(item.first, join(path, key), "duplicate key");
      continue;
    }
    seen.push_back(key);
    bool known = false;
    for (std::string_view a : allowed) known = known || a == key;
    if (!known) report(item.first, join(path, key), unknownKeyReason(key, allowed));
  }
}

YAML::Node YamlReader::child(const YAML::Node& map, std::string_view path,
                             std::string_view key) const {
  expectMap(map, path);
  YAML::Node node = map[std::string(key)];
  if (!node.IsDefined()) fail(map, join(path, key), "required key is missing");
  return node;
}

std::string YamlReader::scalar(const YAML::Node& node, std::string_view path) const {
  if (!node.IsScalar()) fail(node, path, fmt::format("expected a value, got {}", describe(node)));
  return node.Scalar();
}

std::string YamlReader::getString(const YAML::Node& map, std::string_view path,
                                  std::string_view key) const {
  return scalar(child(map, path, key), join(path, key));
}

std::string YamlReader::getString(const YAML::Node& map, std::string_view path,
                                  std::string_view key, const std::string& fallback) const {
  expectMap(map, path);
  if (!map[std::string(key)].IsDefined()) return fallback;
  return getString(map, path, key);
}

namespace {

template <typename T>
bool parseNumber(const std::string& text, T& value) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end;
}

// A scalar's text as the value a getter returns, or the reason it is not one (what fail() says
// after the key path).
tl::expected<std::int64_t, std::string> integerIn(const std::string& text, std::int64_t min,
                                                  std::int64_t max) {
  std::int64_t value = 0;
  if (!parseNumber(text, value)) {
    return tl::unexpected(fmt::format("expected an integer, got '{}'", text));
  }
  if (value < min || value > max) {
    return tl::unexpected(fmt::format("must be between {} and {}, got {}", min, max, value));
  }
  return value;
}

tl::expected<double, std::string> finiteNumber(const std::string& text) {
  double value = 0;
  if (!parseNumber(text, value) || !std::isfinite(value)) {
    return tl::unexpected(fmt::format("expected a number, got '{}'", text));
  }
  return value;
}

tl::expected<double, std::string> numberIn(const std::string& text, double min, double max) {
  auto value = finiteNumber(text);
  if (value && (*value < min || *value > max)) {
    return tl::unexpected(fmt::format("must be between {} and {}, got {}", min, max, *value));
  }
  return value;
}

tl::expected<bool, std::string> trueOrFalse(const std::string& text) {
  if (text == "true") return true;
  if (text == "false") return false;
  return tl::unexpected(fmt::format("expected true or false, got '{}'", text));
}

}  // namespace

std::int64_t YamlReader::getInt(const YAML::Node& map, std::string_view path, std::string_view key,
                                std::int64_t min, std::int64_t max) const {
  YAML::Node node = child(map, path, key);
  std::string p = join(path, key);
  auto value = integerIn(scalar(node, p), min, max);
  if (!value) fail(node, p, value.error());
  return *value;
}

std::int64_t YamlReader::getInt(const YAML::Node& map, std::string_view path, std::string_view key,
                                std::int64_t min, std::int64_t max, std::int64_t fallback) const {
  expectMap(map, path);
  if (!map[std::string(key)].IsDefined()) return fallback;
  return getInt(map, path, key, min, max);
}

double YamlReader::getDouble(const YAML::Node& map, std::string_view path, std::string_view key,
                             double min, double max) const {
  YAML::Node node = child(map, path, key);
  std::string p = join(path, key);
  auto value = numberIn(scalar(node, p), min, max);
  if (!value) fail(node, p, value.error());
  return *value;
}

double YamlReader::getDouble(const YAML::Node& map, std::string_view path, std::string_view key,
                             double min, double max, double fallback) const {
  expectMap(map, path);
  if (!map[std::string(key)].IsDefined()) return fallback;
  return getDouble(map, path, key, min, max);
}

bool YamlReader::getBool(const YAML::Node& map, std::string_view path, std::string_view key) const {
  YAML::Node node = child(map, path, key);
  std::string p = join(path, key);
  auto value = trueOrFalse(scalar(node, p));
  if (!value) fail(node, p, value.error());
  return *value;
}

bool YamlReader::getBool(const YAML::Node& map, std::string_view path, std::string_view key,
                         bool fallback) const {
  expectMap(map, path);
  if (!map[std::string(key)].IsDefined()) return fallback;
  return getBool(map, path, key);
}

std::vector<std::string> YamlReader::getStringList(const YAML::Node& map, std::string_view path,
                                                   std::string_view key) const {
  YAML::Node node = child(map, path, key);
  std::string p = join(path, key);
  expectSequence(node, p);
  std::vector<std::string> values;
  for (std::size_t i = 0; i < node.size(); ++i) values.push_back(scalar(node[i], index(p, i)));
  return values;
}

std::vector<std::int64_t> YamlReader::getIntList(const YAML::Node& map, std::string_view path,
                                                 std::string_view key, std::int64_t min,
                                                 std::int64_t max) const {
  YAML::Node node = child(map, path, key);
  std::string p = join(path, key);
  expectSequence(node, p);
  std::vector<std::int64_t> values;
  for (std::size_t i = 0; i < node.size(); ++i) {
    auto value = integerIn(scalar(node[i], index(p, i)), min, max);
    if (!value) fail(node[i], index(p, i), value.error());
    values.push_back(*value);
  }
  return values;
}

std::vector<double> YamlReader::getDoubleList(const YAML::Node& map, std::string_view path,
                                              std::string_view key) const {
  YAML::Node node = child(map, path, key);
  std::string p = join(path, key);
  expectSequence(node, p);
  std::vector<double> values;
  for (std::size_t i = 0; i < node.size(); ++i) {
    auto value = finiteNumber(scalar(node[i], index(p, i)));
    if (!value) fail(node[i], index(p, i), value.error());
    values.push_back(*value);
  }
  return values;
}

}  // namespace vigil
