#pragma once

#include <chrono>
#include <cstdint>

#include "daemon/capture/picture/captured_picture.h"

namespace vigil {

using SteadyClock = std::chrono::steady_clock;

// One captured picture, as it arrived (CapturedPicture: decoded only when taken, at the size
// asked). Its storage belongs to a FramePool slot and is reused, so a source writes into it.
struct Frame {
  CapturedPicture picture;
  // When the picture was taken, on the monotonic clock (steady_clock is CLOCK_MONOTONIC on
  // Linux, the clock of V4L2 buffer timestamps), so capture-to-result latency is exact.
  SteadyClock::time_point captureTime;
  std::uint64_t sequence = 0;  // the source's frame counter (V4L2 sequence, file frame index)
  // Set by the camera (nextFrameId()): only grows for a camera, across reconnects and reloads,
  // unlike `sequence`. What tells one frame from another after it leaves the camera.
  std::uint64_t id = 0;
};

}  // namespace vigil
