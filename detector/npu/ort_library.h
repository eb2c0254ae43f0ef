#pragma once

#include <filesystem>
#include <string>

#include "foundation/error.h"

struct OrtApi;
struct OrtEnv;
struct OrtStatus;

namespace vigil {

// ONNX Runtime found at run time, so one Vigil package works with the distribution's ONNX
// Runtime and with the one inside AMD's Ryzen AI Software (which carries the Vitis AI EP).
struct OrtLibrary {
  std::filesystem::path path;  // what was dlopen'ed
  const OrtApi* api = nullptr;
  std::string version;  // GetVersionString(), e.g. "1.23.3"
};

// Loads libonnxruntime with dlopen and checks its C API through OrtGetApiBase for the version
// this build was compiled against (ORT_API_VERSION). `where`: the library file or a directory
// holding it (libonnxruntime.so, .so.1) or holding lib/ with it; empty: $VIGIL_ORT_ROOT, else
// the dynamic linker's libonnxruntime.so.1 (the one cpu-ort uses). Loaded once per path and kept
// for the life of the process. Errors name the file and, for an old runtime, both versions.
Expected<const OrtLibrary*> loadOrtLibrary(const std::string& where);

// An OrtEnv whose messages (warnings and worse) go to Vigil's log, logger "npu" (spdlog's default
// before the daemon made it), each at its own level, instead of ONNX Runtime's own coloured lines
// on standard error, outside the log. `logid` names the environment in each message.
OrtStatus* createLoggedOrtEnv(const OrtLibrary& lib, const char* logid, OrtEnv** env);

// The API version this build needs, for messages ("C API 21, ONNX Runtime 1.21 or newer").
int ortApiVersionNeeded();

}  // namespace vigil
