#include "daemon/commands/progress_line.h"

#include <fmt/format.h>
#include <unistd.h>

#include <iostream>
#include <string>
#include <utility>

namespace vigil {

ProgressLine::ProgressLine(std::string what, std::string unit, std::size_t total, std::ostream& err,
                           bool terminal, Clock::time_point start)
    : what_(std::move(what)),
      unit_(std::move(unit)),
      total_(total),
      err_(err),
      terminal_(terminal),
      start_(start),
      last_(start) {}

ProgressLine::ProgressLine(std::string what, std::string unit, std::size_t total)
    : ProgressLine(std::move(what), std::move(unit), total, std::cerr, isatty(2) == 1) {}

void ProgressLine::update(std::size_t count, Clock::time_point now) {
  const Clock::duration every = terminal_ ? Clock::duration(kTerminalEvery) : kLogEvery;
  if (now - last_ < every) return;
  last_ = now;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const std::string text = total_ > 0
                               ? fmt::format("{}: {} of {} {} ({} %), {:.0f} s", what_, count,
                                             total_, unit_, count * 100 / total_, seconds)
                               : fmt::format("{}: {} {}, {:.0f} s", what_, count, unit_, seconds);
  if (terminal_) {
    err_ << "\r\033[K" << text << std::flush;
    shown_ = true;
  } else {
    err_ << text << "\n" << std::flush;
  }
}

void ProgressLine::done() {
  if (!shown_) return;
  err_ << "\r\033[K" << std::flush;
  shown_ = false;
}

}  // namespace vigil
