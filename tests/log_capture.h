#pragma once

#include <spdlog/sinks/ostream_sink.h>

#include <algorithm>
#include <memory>
#include <sstream>
#include <string>

#include "daemon/base/log.h"

namespace vigil::testing {

// What one component's logger says while the capture lives, one message a line (the message
// only, no time or level): for asserting the errors of a command run in-process. The logger
// keeps writing to standard error as well. Not for loggers other threads write to meanwhile:
// adding and removing a sink is not synchronized with logging.
class LogCapture {
 public:
  explicit LogCapture(const std::string& component)
      : logger_(vigil::logger(component)),
        sink_(std::make_shared<spdlog::sinks::ostream_sink_mt>(stream_)) {
    sink_->set_pattern("%v");
    logger_->sinks().push_back(sink_);
  }
  ~LogCapture() {
    auto& sinks = logger_->sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  std::string text() const { return stream_.str(); }

 private:
  std::ostringstream stream_;
  std::shared_ptr<spdlog::logger> logger_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
};

}  // namespace vigil::testing
