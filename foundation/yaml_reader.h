#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "foundation/yaml_errors.h"

namespace vigil {

// Reads a YAML document strictly and says where a problem is, in the form
// "cameras.yaml:12:5: cameras[1].fps: must be between 1 and 60, got 0" (YamlError).
class YamlReader {
 public:
  // Files larger than this are refused before parsing (a 50 MB file took yaml-cpp 22 s and
  // 4.5 GB of memory).
  static constexpr std::size_t kMaxFileBytes = 1024 * 1024;

  // Parses the file; throws YamlError with file:line:col on a syntax error, and with the reason
  // for a missing or unreadable file, a directory, a FIFO or device, or one over kMaxFileBytes.
  static YamlReader fromFile(const std::string& path);
  static YamlReader fromString(const std::string& text, std::string displayName);

  const YAML::Node& root() const { return root_; }
  const std::string& fileName() const { return fileName_; }

  // "file:line:col: path: reason"
  // "file:line:col: path: reason" (without line and column when the node has no mark).
  std::string describeLocation(const YAML::Node& at, std::string_view path,
                               std::string_view reason) const;
  [[noreturn]] void fail(const YAML::Node& at, std::string_view path,
                         std::string_view reason) const;
  // An error the reading goes on past (the value is not used by what follows): recorded when
  // collecting, else thrown as fail() does.
  void report(const YAML::Node& at, std::string_view path, std::string_view reason) const;

  // Each of these fails with the key path when the node is missing or of the wrong type.
  void expectMap(const YAML::Node& node, std::string_view path) const;
  void expectSequence(const YAML::Node& node, std::string_view path) const;
  // Each key of `map` that is not in `allowed` or that repeats is an error naming it: recorded
  // when collecting (the map is read on with the keys it knows), else thrown at the first.
  void rejectUnknownKeys(const YAML::Node& map, std::string_view path,
                         std::initializer_list<std::string_view> allowed) const;

  // Required field `key` of `map`; `path` is the map's own path ("" for the root).
  std::string getString(const YAML::Node& map, std::string_view path, std::string_view key) const;
  std::int64_t getInt(const YAML::Node& map, std::string_view path, std::string_view key,
                      std::int64_t min, std::int64_t max) const;
  double getDouble(const YAML::Node& map, std::string_view path, std::string_view key, double min,
                   double max) const;
  bool getBool(const YAML::Node& map, std::string_view path, std::string_view key) const;

  // Optional fields: the fallback when the key is absent, the same checks when present.
  std::string getString(const YAML::Node& map, std::string_view path, std::string_view key,
                        const std::string& fallback) const;
  std::int64_t getInt(const YAML::Node& map, std::string_view path, std::string_view key,
                      std::int64_t min, std::int64_t max, std::int64_t fallback) const;
  double getDouble(const YAML::Node& map, std::string_view path, std::string_view key, double min,
                   double max, double fallback) const;
  bool getBool(const YAML::Node& map, std::string_view path, std::string_view key,
               bool fallback) const;

  std::vector<std::string> getStringList(const YAML::Node& map, std::string_view path,
                                         std::string_view key) const;
  std::vector<std::int64_t> getIntList(const YAML::Node& map, std::string_view path,
                                       std::string_view key, std::int64_t min,
                                       std::int64_t max) const;
  std::vector<double> getDoubleList(const YAML::Node& map, std::string_view path,
                                    std::string_view key) const;

  // The child node of a map, failing when required and absent.
  YAML::Node child(const YAML::Node& map, std::string_view path, std::string_view key) const;

  // Collecting: errors the reading can go on past are recorded in `errors` (borrowed; it
  // outlives the reading) instead of thrown, so that one run names them all. Without it (the
  // model manifests), the first error throws.
  void collectInto(YamlErrors& errors) { errors_ = &errors; }
  // Runs `read`; when collecting, a YamlError it throws is recorded and false returned (the
  // caller skips what depends on it and goes on); otherwise the error propagates.
  bool collect(const std::function<void()>& read) const;

  static std::string join(std::string_view path, std::string_view key);
  static std::string index(std::string_view path, std::size_t i);

 private:
  YamlReader(YAML::Node root, std::string fileName)
      : root_(std::move(root)), fileName_(std::move(fileName)) {}

  std::string scalar(const YAML::Node& node, std::string_view path) const;

  YAML::Node root_;
  std::string fileName_;
  YamlErrors* errors_ = nullptr;  // collecting into, when set
};

}  // namespace vigil
