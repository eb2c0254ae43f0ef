#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "daemon/capture/frame/frame.h"

namespace vigil {

class FramePool;

// A move-only handle to one frame of a pool; the frame goes back to the pool when the handle
// is destroyed. Valid handles keep their pool alive.
class FrameHandle {
 public:
  FrameHandle() = default;
  FrameHandle(FrameHandle&& other) noexcept;
  FrameHandle& operator=(FrameHandle&& other) noexcept;
  FrameHandle(const FrameHandle&) = delete;
  FrameHandle& operator=(const FrameHandle&) = delete;
  ~FrameHandle();

  explicit operator bool() const { return pool_ != nullptr; }
  Frame& operator*() const { return *frame_; }
  Frame* operator->() const { return frame_; }

 private:
  friend class FramePool;
  FrameHandle(std::shared_ptr<FramePool> pool, Frame* frame, std::size_t index)
      : pool_(std::move(pool)), frame_(frame), index_(index) {}
  void release();

  std::shared_ptr<FramePool> pool_;
  Frame* frame_ = nullptr;
  std::size_t index_ = 0;
};

// A fixed set of frames for one camera. Their pixel buffers are allocated on first use and then
// reused, so steady capture does not allocate. When every frame is out, acquire() returns
// nothing and the caller drops the picture (and counts it).
// Threads: acquire() and handle release may happen on any thread.
class FramePool : public std::enable_shared_from_this<FramePool> {
 public:
  static std::shared_ptr<FramePool> create(std::size_t size);

  std::optional<FrameHandle> acquire();
  std::size_t size() const { return frames_.size(); }
  std::size_t available() const;

 private:
  friend class FrameHandle;
  explicit FramePool(std::size_t size);
  void giveBack(std::size_t index);

  std::vector<Frame> frames_;
  mutable std::mutex mutex_;
  std::vector<std::size_t> free_;
};

}  // namespace vigil
