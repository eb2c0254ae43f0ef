#pragma once

#include <filesystem>

namespace vigil {

// The model directory an executable uses when nothing names one (no --model, $VIGIL_MODEL or
// detector.model). Each executable says where once, in main(), before anything runs: the
// source tree's models/yolox-nano for build/vigil, /var/lib/vigil/models/yolox-nano for the
// packaged one. Both are the same program built once; only this answer differs.
void setBuiltInModelDir(std::filesystem::path dir);
const std::filesystem::path& builtInModelDir();

}  // namespace vigil
