#pragma once

#include <filesystem>
#include <string>

#include "daemon/base/error.h"
#include "daemon/settings/web_settings.h"

namespace vigil {

// Reads and checks the file. Errors read like
// "/etc/vigil/web-config.yml:4:3: basic_auth_users.admin: not a bcrypt hash ...".
Expected<WebConfig> loadWebConfig(const std::filesystem::path& file);
Expected<WebConfig> parseWebConfig(const std::string& text, const std::filesystem::path& file);

}  // namespace vigil
