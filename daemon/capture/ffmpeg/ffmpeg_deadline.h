#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "daemon/base/error.h"

namespace vigil {

// The bound on FFmpeg's blocking calls (opening an input, reading a packet): a deadline set
// before each call, and a stop, both seen by FFmpeg through its interrupt callback (expired),
// which makes the call return at once.
// Threads: setFrom() and failure() on the reading thread; interrupt() from any; expired() on
// whichever thread FFmpeg calls it.
class FfmpegDeadline {
 public:
  // FFmpeg's AVIOInterruptCB callback, `self` this: 1 when stopped or past the deadline.
  static int expired(void* self);
  void setFrom(std::chrono::milliseconds from);
  void interrupt() { interrupted_ = true; }
  bool interrupted() const { return interrupted_; }
  // Why a blocking call on `location` failed: a stop, its deadline (`limit`), or FFmpeg's own
  // reason for `rc`.
  tl::unexpected<Error> failure(const std::string& location, const char* what, int rc,
                                std::chrono::milliseconds limit) const;

 private:
  bool pastDeadline() const;

  std::atomic<bool> interrupted_{false};
  std::atomic<std::int64_t> deadline_{0};  // the steady clock's count
};

}  // namespace vigil
