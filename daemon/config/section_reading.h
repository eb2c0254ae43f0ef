#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/settings/settings.h"
#include "foundation/yaml_reader.h"

// What every section's reader of cameras.yaml uses (config_file.cpp, camera_section.cpp): names,
// paths, numbers, durations and secret files, each error at the node's file:line:col.
namespace vigil::yaml_config {

// 1 to 64 characters of a-z, 0-9, _ and -.
bool validName(const std::string& name);
// Fails at `node` unless `name` is such a name, saying what one is.
void checkName(const YamlReader& r, const YAML::Node& node, const std::string& path,
               const std::string& name);
bool startsWith(const std::string& s, std::string_view prefix);
// `path` made absolute against `base` (the configuration file's directory).
std::filesystem::path resolve(const std::filesystem::path& base, const std::string& path);
double readNumber(const YamlReader& r, const YAML::Node& node, const std::string& path);
std::chrono::milliseconds seconds(double value);
// The one line a password file holds.
std::string readSecretFile(const YamlReader& r, const YAML::Node& node, const std::string& path,
                           const std::filesystem::path& file);
void warnIfWorldReadable(const YamlReader& r, const YAML::Node& node, const std::string& path,
                         const std::filesystem::path& file, std::vector<std::string>& warnings);
HwAccel readHwAccel(const YamlReader& r, const YAML::Node& node, const std::string& path,
                    HwAccel fallback);

}  // namespace vigil::yaml_config
