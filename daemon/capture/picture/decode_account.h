#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

#include "daemon/base/error.h"
#include "daemon/base/log_rate_limit.h"
#include "daemon/capture/picture/jpeg_frame.h"

namespace vigil {

// Where a camera's pictures bill their decoding, wherever it happens, and what their decoding
// found. Billed: frames turned into pixels (once a frame, however many sizes), and the CPU their
// decoding took on threads other than the camera's capture thread (whose own CPU clock already
// counts what it does itself). Found: each picture's verdict, once a picture (CapturedPicture
// reports it at its first decode): pictures refused as corrupt, what the JPEG decoder said of
// them per kind, logged with the camera's name at most once a minute per kind; and how long
// every decoded picture has been corrupt, which the capture thread reads as a stall (a camera
// whose pictures all decode damaged gives nothing usable, as a silent one).
// Why the verdict comes back this way: pictures are decoded on demand on other threads (the
// inference worker, the motion gate, the status page), long after the capture thread handed them
// off, and the account is what those threads share with the camera already.
// Threads: any. Counters are atomic; the log's rate limit and the last refusal under a mutex,
// taken only when a picture is refused or the decoder said something.
struct DecodeAccount {
  std::atomic<std::uint64_t> frames{0};
  std::atomic<std::int64_t> cpuNanosElsewhere{0};

  // The camera's name in log lines (set before its capture thread starts).
  void setCamera(std::string camera);
  // One picture's first decode: `messages` what libjpeg said (nullptr: not a JPEG), `refused`
  // why it is corrupt (nullptr: usable).
  void report(const JpegMessages* messages, const Error* refused);

  std::uint64_t corrupt() const { return corrupt_.load(std::memory_order_relaxed); }
  // Pictures of which the JPEG decoder said `kind` (each counted once per kind).
  std::uint64_t messages(JpegMessageKind kind) const {
    return messages_[static_cast<std::size_t>(kind)].load(std::memory_order_relaxed);
  }
  // Whether the pictures decoded since startOver() have all been corrupt for at least `limit`:
  // the first and the latest of the run that far apart. Then, the latest refusal.
  bool corruptFor(std::chrono::steady_clock::duration limit) const;
  std::string lastRefusal() const;
  // A new session of the source: an earlier run of corrupt pictures is forgotten.
  void startOver();

 private:
  using Clock = std::chrono::steady_clock;
  void log(JpegMessageKind kind, std::string_view text);

  std::atomic<std::uint64_t> corrupt_{0};
  std::array<std::atomic<std::uint64_t>, kJpegMessageKinds> messages_{};
  // The current run of corrupt pictures, as steady-clock nanoseconds (0: none).
  std::atomic<std::int64_t> corruptSince_{0};
  std::atomic<std::int64_t> corruptLatest_{0};
  mutable std::mutex mutex_;
  std::string camera_;
  std::string lastRefusal_;
  LogRateLimit logLimit_;
  std::array<std::uint64_t, kJpegMessageKinds> unlogged_{};  // since each kind's last line
};

}  // namespace vigil
