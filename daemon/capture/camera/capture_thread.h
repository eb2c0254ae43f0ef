#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "daemon/capture/frame/frame.h"

namespace vigil {

// A camera's capture thread and its end, which the thread shares with its owner. A thread that a
// stop could not wait for (stuck in a read that nothing interrupts: a file on a share that
// stopped answering) is left behind: it outlives its owner, is counted as background work
// (foundation/background_work.h), and when its body returns at last it runs what its owner handed
// over to it (handOver: deleting the camera) and says so. The next thread of the same camera
// waits on the End of the one left behind before it opens the source.
// Threads: everything but the body from the owner's thread.
class CaptureThread {
 public:
  // Shared by the owner and its thread.
  struct End {
    std::mutex mutex;
    std::condition_variable ended;
    bool done = false;              // the body has returned
    bool leftBehind = false;        // joinBy() stopped waiting for it
    std::function<void()> custody;  // handed over: run by the thread at its end
  };

  ~CaptureThread();

  bool joinable() const { return thread_.joinable(); }
  // Runs `body` on a new thread (a new End); `camera` names it in the log. `predecessor`: the
  // End of this camera's thread a stop left behind, if any, for awaitPredecessor().
  void start(std::function<void()> body, std::string camera,
             std::shared_ptr<End> predecessor = nullptr);
  void join();
  // Joins the thread if its body returns by `deadline` and returns true; otherwise detaches it,
  // leaves it behind and returns false.
  bool joinBy(SteadyClock::time_point deadline);
  // The thread joinBy() left behind (done or not); null when it was joined.
  std::shared_ptr<End> leftBehind() const;
  bool hasPredecessor() const { return predecessor_ != nullptr; }
  // On the new thread: waits until the predecessor has ended; false when `stopping` was set
  // meanwhile (and wakeAwaitPredecessor() called).
  bool awaitPredecessor(const std::atomic<bool>& stopping);
  void wakeAwaitPredecessor();
  // Hands `last` to a thread left behind that is still running, to run at its end, and returns
  // true; false when there is no such thread (the caller runs it itself).
  bool handOver(std::function<void()> last);

 private:
  static void run(const std::function<void()>& body, const std::shared_ptr<End>& end,
                  const std::string& camera);

  std::shared_ptr<End> end_ = std::make_shared<End>();
  std::shared_ptr<End> predecessor_;  // start's
  std::thread thread_;
};

}  // namespace vigil
