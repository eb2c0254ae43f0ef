#pragma once

#include <spdlog/spdlog.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace vigil {

// One logger per component ("detect", "capture", "mqtt", ...), all writing to standard error
// through one sink. Thread-safe; cheap to call, but hot paths keep the returned pointer.
std::shared_ptr<spdlog::logger> logger(const std::string& component);

// Sets the level of every logger, present and future ("trace" ... "off").
void setLogLevel(spdlog::level::level_enum level);

// The levels cameras.yaml's log.level and `vigil run --log-level` take, by name: trace, debug,
// info, warn, error (kLogLevelNames, in that order). nullopt for any other name.
inline constexpr std::string_view kLogLevelNames[] = {"trace", "debug", "info", "warn", "error"};
std::optional<spdlog::level::level_enum> logLevelNamed(std::string_view name);
// The name logLevelNamed() takes for `level` ("warn", not spdlog's "warning").
std::string_view logLevelName(spdlog::level::level_enum level);

// `text` as every line of Vigil's log shows it: passwords in URLs replaced by *** and control
// bytes other than newline and tab written as \xNN. For messages written past the logger.
std::string safeToShow(std::string_view text);

}  // namespace vigil
