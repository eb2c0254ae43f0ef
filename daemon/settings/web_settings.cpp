#include "daemon/settings/web_settings.h"

namespace vigil {

std::vector<std::filesystem::path> WebConfig::sources() const {
  std::vector<std::filesystem::path> files{file};
  if (tls) {
    for (const std::string& f : {tls->certFile, tls->keyFile, tls->clientCaFile}) {
      if (!f.empty()) files.emplace_back(f);
    }
  }
  return files;
}

}  // namespace vigil
