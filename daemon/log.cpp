#include "daemon/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <mutex>

namespace vigil {

namespace {

std::mutex& registryMutex() {
  static std::mutex mutex;
  return mutex;
}

spdlog::sink_ptr& sharedSink() {
  static spdlog::sink_ptr sink = [] {
    auto s = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    s->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%-5l%$ [%n] %v");
    return s;
  }();
  return sink;
}

spdlog::level::level_enum& currentLevel() {
  static spdlog::level::level_enum level = spdlog::level::info;
  return level;
}

}  // namespace

std::shared_ptr<spdlog::logger> logger(const std::string& component) {
  std::lock_guard lock(registryMutex());
  if (auto existing = spdlog::get(component)) return existing;
  auto created = std::make_shared<spdlog::logger>(component, sharedSink());
  created->set_level(currentLevel());
  spdlog::register_logger(created);
  return created;
}

void setLogLevel(spdlog::level::level_enum level) {
  std::lock_guard lock(registryMutex());
  currentLevel() = level;
  spdlog::set_level(level);
}

}  // namespace vigil
