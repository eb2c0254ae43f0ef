// Fuzzes the cameras.yaml loader: any text must give a Config or an error, never a crash,
// an exception or a hang.
#include <cstddef>
#include <cstdint>
#include <string>

#include "daemon/config/config_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto config = vigil::parseConfig(text, "/nonexistent/fuzz/cameras.yaml");
  if (!config) (void)config.error().message;
  return 0;
}
