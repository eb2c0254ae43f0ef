#include "detector/npu/run_watchdog.h"

namespace vigil {

RunWatchdog::RunWatchdog() : thread_([this] { loop(); }) {}

RunWatchdog::~RunWatchdog() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void RunWatchdog::arm(std::chrono::milliseconds timeout, std::function<void()> cut) {
  {
    std::lock_guard lock(mutex_);
    deadline_ = std::chrono::steady_clock::now() + timeout;
    cut_ = std::move(cut);
    fired_ = false;
  }
  changed_.notify_all();
}

bool RunWatchdog::disarm() {
  std::lock_guard lock(mutex_);
  deadline_.reset();
  cut_ = nullptr;
  return fired_;
}

void RunWatchdog::loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (!deadline_) {
      changed_.wait(lock);
      continue;
    }
    const auto deadline = *deadline_;
    if (changed_.wait_until(lock, deadline) == std::cv_status::no_timeout) continue;
    // Still the same run, still armed: cut it (under the lock, so disarm() waits for it).
    if (deadline_ && *deadline_ == deadline && std::chrono::steady_clock::now() >= deadline) {
      if (cut_) cut_();
      fired_ = true;
      deadline_.reset();
    }
  }
}

}  // namespace vigil
