#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "daemon/base/error.h"
#include "daemon/settings/settings.h"

namespace vigil {

// Where the package installs cameras.yaml, and where `vigil run` and `vigil doctor` look first.
inline constexpr const char* kInstalledConfig = "/etc/vigil/cameras.yaml";

// The environment variable that holds the MQTT password when mqtt.password_file is not set.
inline constexpr const char* kMqttPasswordEnv = "VIGIL_MQTT_PASSWORD";

// Reads and validates cameras.yaml. The error names file:line:col, the key path and the reason,
// e.g. "cameras.yaml:12:5: cameras[1].fps: must be between 0.1 and 120, got 0"; every error the
// reading could go on past is in it: several as "N errors:" and one a line, in file order.
// Relative model and file: paths are taken relative to the file's directory.
Expected<Config> loadConfig(const std::filesystem::path& file);
Expected<Config> parseConfig(const std::string& text, const std::filesystem::path& file);

// The node name a host name gives: its first label, lower case, other characters than a-z, 0-9,
// _ and - as '-', at most 58 characters; "vigil" when nothing is left.
std::string nodeNameOf(std::string_view hostName);
// nodeNameOf(this machine's host name).
std::string hostNodeName();

}  // namespace vigil
