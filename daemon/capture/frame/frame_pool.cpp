#include "daemon/capture/frame/frame_pool.h"

namespace vigil {

FrameHandle::FrameHandle(FrameHandle&& other) noexcept
    : pool_(std::move(other.pool_)), frame_(other.frame_), index_(other.index_) {
  other.frame_ = nullptr;
}

FrameHandle& FrameHandle::operator=(FrameHandle&& other) noexcept {
  if (this != &other) {
    release();
    pool_ = std::move(other.pool_);
    frame_ = other.frame_;
    index_ = other.index_;
    other.frame_ = nullptr;
  }
  return *this;
}

FrameHandle::~FrameHandle() { release(); }

void FrameHandle::release() {
  if (pool_) {
    pool_->giveBack(index_);
    pool_.reset();
    frame_ = nullptr;
  }
}

std::shared_ptr<FramePool> FramePool::create(std::size_t size) {
  return std::shared_ptr<FramePool>(new FramePool(size));
}

FramePool::FramePool(std::size_t size) : frames_(size) {
  free_.reserve(size);
  for (std::size_t i = size; i > 0; --i) free_.push_back(i - 1);
}

std::optional<FrameHandle> FramePool::acquire() {
  std::lock_guard lock(mutex_);
  if (free_.empty()) return std::nullopt;
  std::size_t index = free_.back();
  free_.pop_back();
  return FrameHandle(shared_from_this(), &frames_[index], index);
}

std::size_t FramePool::available() const {
  std::lock_guard lock(mutex_);
  return free_.size();
}

void FramePool::giveBack(std::size_t index) {
  std::lock_guard lock(mutex_);
  free_.push_back(index);  // capacity reserved at creation: never allocates
}

}  // namespace vigil
