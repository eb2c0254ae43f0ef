#include "daemon/config/section_reading.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace vigil::yaml_config {

bool validName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return false;
  }
  return true;
}

void checkName(const YamlReader& r, const YAML::Node& node, const std::string& path,
               const std::string& name) {
  if (!validName(name)) {
    r.fail(node, path,
           fmt::format("must be 1 to 64 characters of a-z, 0-9, _ and -, got '{}'", name));
  }
}

bool startsWith(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

std::filesystem::path resolve(const std::filesystem::path& base, const std::string& path) {
  std::filesystem::path p(path);
  return p.is_absolute() ? p : (base / p).lexically_normal();
}

double readNumber(const YamlReader& r, const YAML::Node& node, const std::string& path) {
  if (!node.IsScalar()) r.fail(node, path, "expected a number");
  const std::string text = node.Scalar();
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value)) {
    r.fail(node, path, fmt::format("expected a number, got '{}'", text));
  }
  return value;
}

std::chrono::milliseconds seconds(double value) {
  return std::chrono::milliseconds(std::llround(value * 1000));
}

std::string readSecretFile(const YamlReader& r, const YAML::Node& node, const std::string& path,
                           const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) {
    r.fail(node, path, fmt::format("cannot read '{}': {}", file.string(), std::strerror(errno)));
  }
  std::stringstream text;
  text << in.rdbuf();
  std::string secret = text.str();
  // One line, as `echo secret > file` writes it.
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();
  if (secret.empty()) r.fail(node, path, fmt::format("'{}' is empty", file.string()));
  return secret;
}

// A secret that every local user can read is not one. Not refused: the daemon keeps working
// while the owner fixes it, but every start and reload says so.
void warnIfWorldReadable(const YamlReader& r, const YAML::Node& node, const std::string& path,
                         const std::filesystem::path& file, std::vector<std::string>& warnings) {
  struct stat info {};
  if (::stat(file.c_str(), &info) != 0 || (info.st_mode & S_IROTH) == 0) return;
  warnings.push_back(r.describeLocation(
      node, path,
      fmt::format("'{}' is readable by every user (mode {:04o}); chmod 600 or 640 it",
                  file.string(), info.st_mode & 07777)));
}

// `hwaccel` of a camera or of the capture section; `fallback` when absent.
HwAccel readHwAccel(const YamlReader& r, const YAML::Node& node, const std::string& path,
                    HwAccel fallback) {
  if (!node["hwaccel"].IsDefined()) return fallback;
  const std::string accel = r.getString(node, path, "hwaccel");
  if (accel == "none") return HwAccel::kNone;
  if (accel == "vaapi") return HwAccel::kVaapi;
  r.fail(node["hwaccel"], YamlReader::join(path, "hwaccel"),
         fmt::format("must be none or vaapi, got '{}'", accel));
}

}  // namespace vigil::yaml_config
