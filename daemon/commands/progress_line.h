#pragma once

#include <chrono>
#include <cstddef>
#include <ostream>
#include <string>

namespace vigil {

// How far a long command is (`vigil track` through a clip, `eval` through a set of images,
// `detect` through many files), on standard error: on a terminal one line rewritten at most
// every kTerminalEvery ("track: 400 of 1394 frames (29 %), 6 s"), elsewhere (a log, a pipe) a
// line every kLogEvery, so that a long run says it is alive without flooding a log. Nothing for
// a run shorter than the first period; done() clears the terminal's line.
class ProgressLine {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kTerminalEvery{500};
  static constexpr std::chrono::seconds kLogEvery{10};

  // `total` 0: unknown (a stream, a video without a frame count).
  ProgressLine(std::string what, std::string unit, std::size_t total, std::ostream& err,
               bool terminal, Clock::time_point start = Clock::now());
  // On standard error, a terminal or not as isatty(2) says.
  ProgressLine(std::string what, std::string unit, std::size_t total);
  ~ProgressLine() { done(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void update(std::size_t count, Clock::time_point now = Clock::now());
  void done();

 private:
  std::string what_;
  std::string unit_;
  std::size_t total_;
  std::ostream& err_;
  bool terminal_;
  Clock::time_point start_;
  Clock::time_point last_;
  bool shown_ = false;  // a terminal line is there to clear
};

}  // namespace vigil
