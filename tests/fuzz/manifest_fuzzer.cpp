// Fuzzes the model manifest parser (model.yaml): any text must give a manifest or an error.
// The parser reads a file, so each input is written to one scratch file first.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "detector/model_manifest.h"

namespace {

// One scratch directory for the whole run, removed at exit.
struct ScratchDir {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("vigil-manifest-fuzz-" + std::to_string(::getpid()));
  ScratchDir() { std::filesystem::create_directories(path); }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const ScratchDir scratch;
  const std::filesystem::path file = scratch.path / "model.yaml";
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  auto manifest = vigil::loadModelManifest(file);
  if (!manifest) (void)manifest.error().message;
  return 0;
}
