#pragma once

#include <linux/videodev2.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "daemon/base/error.h"

namespace vigil {

struct V4l2Format;

// A V4L2 stream's memory-mapped buffers: 4 asked of the driver, mapped, all queued, streaming on;
// then filled buffers are dequeued one at a time and queued again once their bytes are used.
// Ownership: owns the mappings and the driver's buffers from start() until release() (which the
// destructor does not do: release before the device closes); borrows the device's fd for that
// whole time.
// Threads: its camera's capture thread only.
// Failure (never throws): the messages start with the device's location.
//  - start(): kUnavailable when the driver refuses or fails (REQBUFS, QUERYBUF, mmap, QBUF,
//    STREAMON; EBUSY on REQBUFS names another program streaming), kUnsupported when a buffer is
//    too small for the negotiated YUYV picture. Call release() after a failure.
//  - dequeue(): kTimeout when no buffer was filled within the timeout; kUnavailable when the
//    device is gone or failed (poll error or hang-up, DQBUF other than EAGAIN, an index out of
//    range). Only while streaming().
//  - requeue(): kUnavailable "capture failed: VIDIOC_QBUF (buffer N): ...".
// Dequeue and requeue do not allocate.
class V4l2BufferRing {
 public:
  V4l2BufferRing() = default;
  V4l2BufferRing(const V4l2BufferRing&) = delete;
  V4l2BufferRing& operator=(const V4l2BufferRing&) = delete;

  Expected<void> start(int fd, const V4l2Format& format, const std::string& location);
  // Waits at most `timeout` for a filled buffer, or until `stopFd` (an eventfd, -1: none) is
  // readable (kTimeout then); the caller requeues a buffer when done with its bytes, whatever
  // became of them, so the driver never runs out.
  Expected<v4l2_buffer> dequeue(std::chrono::milliseconds timeout, int stopFd = -1);
  // The filled part of a dequeued buffer, valid until it is requeued.
  std::span<const std::uint8_t> bytes(const v4l2_buffer& buffer) const;
  Expected<void> requeue(std::uint32_t index);
  // Best effort, as after an unplug every call fails (ENODEV): streaming off, mappings undone,
  // the driver's buffers freed. Nothing when nothing was started.
  void release();

  bool streaming() const { return streaming_; }
  std::size_t size() const { return mappings_.size(); }

 private:
  struct Mapping {
    void* start = nullptr;
    std::size_t length = 0;
  };

  Expected<std::uint32_t> requestBuffers();
  Expected<void> mapBuffers(std::uint32_t count, const V4l2Format& format);

  int fd_ = -1;
  std::string location_;  // for error messages
  bool requested_ = false;
  bool streaming_ = false;
  std::vector<Mapping> mappings_;
};

}  // namespace vigil
