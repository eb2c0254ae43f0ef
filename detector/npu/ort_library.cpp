#include "detector/npu/ort_library.h"

#include <dlfcn.h>
#include <onnxruntime_c_api.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>

#include "detector/npu/ort_log.h"

namespace vigil {

namespace {

// The file to dlopen for `where` (see loadOrtLibrary).
std::string libraryFile(const std::string& where) {
  std::string root = where;
  if (root.empty()) {
    const char* env = std::getenv("VIGIL_ORT_ROOT");
    if (env == nullptr || *env == '\0') return "libonnxruntime.so.1";
    root = env;
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec)) return root;
  for (const char* dir : {"", "lib"}) {
    for (const char* name : {"libonnxruntime.so", "libonnxruntime.so.1"}) {
      std::filesystem::path p = std::filesystem::path(root) / dir / name;
      if (std::filesystem::exists(p, ec)) return p.string();
    }
  }
  return (std::filesystem::path(root) / "libonnxruntime.so").string();
}

Expected<OrtLibrary> open(const std::string& file) {
  void* handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return makeError(ErrorCode::kNotFound, "cannot load ONNX Runtime '{}': {}", file,
                     why != nullptr ? why : "dlopen failed");
  }
  // The header's own declaration gives the exact type (noexcept included) to call it through.
  auto getBase = reinterpret_cast<decltype(&OrtGetApiBase)>(::dlsym(handle, "OrtGetApiBase"));
  if (getBase == nullptr) {
    ::dlclose(handle);
    return makeError(ErrorCode::kInvalidData, "'{}' is not ONNX Runtime: it has no OrtGetApiBase",
                     file);
  }
  const OrtApiBase* base = getBase();
  OrtLibrary lib;
  lib.path = file;
  lib.version = base->GetVersionString();
  lib.api = base->GetApi(ORT_API_VERSION);
  if (lib.api == nullptr) {
    ::dlclose(handle);
    return makeError(ErrorCode::kUnsupported,
                     "ONNX Runtime '{}' is version {}, which does not offer C API version {} that "
                     "Vigil was built against (ONNX Runtime 1.{} or newer needed)",
                     file, lib.version, ORT_API_VERSION, ORT_API_VERSION);
  }
  // The handle stays open for the life of the process: sessions and the API table live in it.
  return lib;
}

}  // namespace

int ortApiVersionNeeded() { return ORT_API_VERSION; }

void logOrtMessage(void* param, OrtLoggingLevel severity, const char* /*category*/,
                   const char* logid, const char* /*location*/, const char* message) {
  auto log = spdlog::get(param != nullptr ? static_cast<const char*>(param) : "npu");
  if (!log) log = spdlog::default_logger();
  // By OrtLoggingLevel: VERBOSE, INFO (ONNX Runtime's chatter: debug), WARNING, ERROR, FATAL.
  static constexpr spdlog::level::level_enum kLevels[] = {
      spdlog::level::trace, spdlog::level::debug, spdlog::level::warn, spdlog::level::err,
      spdlog::level::critical};
  const auto index = static_cast<std::size_t>(severity);
  const spdlog::level::level_enum level =
      index < std::size(kLevels) ? kLevels[index] : spdlog::level::critical;
  log->log(level, "ONNX Runtime ({}): {}", logid != nullptr ? logid : "?",
           message != nullptr ? message : "");
}

OrtStatus* createLoggedOrtEnv(const OrtLibrary& lib, const char* logid, OrtEnv** env) {
  return lib.api->CreateEnvWithCustomLogger(logOrtMessage, nullptr, ORT_LOGGING_LEVEL_WARNING,
                                            logid, env);
}

Expected<const OrtLibrary*> loadOrtLibrary(const std::string& where) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<OrtLibrary>> loaded;
  const std::string file = libraryFile(where);
  std::lock_guard lock(mutex);
  if (auto it = loaded.find(file); it != loaded.end()) return it->second.get();
  auto lib = open(file);
  if (!lib) return tl::unexpected(lib.error());
  auto& slot = loaded[file];
  slot = std::make_unique<OrtLibrary>(std::move(*lib));
  return slot.get();
}

}  // namespace vigil
