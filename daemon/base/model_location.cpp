#include "daemon/base/model_location.h"

#include <utility>

namespace vigil {
namespace {

std::filesystem::path& builtIn() {
  static std::filesystem::path dir;
  return dir;
}

}  // namespace

void setBuiltInModelDir(std::filesystem::path dir) { builtIn() = std::move(dir); }

const std::filesystem::path& builtInModelDir() { return builtIn(); }

}  // namespace vigil
