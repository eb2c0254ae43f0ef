#include "daemon/capture/camera/capture_thread.h"

#include <utility>

#include "daemon/base/log.h"
#include "daemon/base/thread_name.h"
#include "foundation/background_work.h"

namespace vigil {

CaptureThread::~CaptureThread() {
  if (thread_.joinable()) thread_.join();
}

void CaptureThread::start(std::function<void()> body, std::string camera,
                          std::shared_ptr<End> predecessor) {
  end_ = std::make_shared<End>();
  predecessor_ = std::move(predecessor);
  const std::string name = "cam " + camera;
  thread_ = std::thread(&CaptureThread::run, std::move(body), end_, std::move(camera));
  nameThread(thread_, name);
}

void CaptureThread::run(const std::function<void()>& body, const std::shared_ptr<End>& end,
                        const std::string& camera) {
  body();
  std::function<void()> custody;
  bool leftBehind = false;
  {
    std::lock_guard lock(end->mutex);
    end->done = true;
    leftBehind = end->leftBehind;
    if (leftBehind) {
      // The camera is still there: its owner deletes it only after this block, or handed it over.
      logger("capture")->info("[cam={}] the capture thread left behind by a stop has ended",
                              camera);
    }
    custody = std::exchange(end->custody, nullptr);
  }
  end->ended.notify_all();
  if (custody) custody();  // from here on the camera may be gone
  if (leftBehind) background::detachedEnded();
}

bool CaptureThread::awaitPredecessor(const std::atomic<bool>& stopping) {
  std::unique_lock lock(predecessor_->mutex);
  predecessor_->ended.wait(lock, [&] { return predecessor_->done || stopping; });
  return !stopping;
}

void CaptureThread::wakeAwaitPredecessor() {
  if (!predecessor_) return;
  // awaitPredecessor() checks the stop under this mutex: taken once, the wake cannot be lost.
  { std::lock_guard lock(predecessor_->mutex); }
  predecessor_->ended.notify_all();
}

void CaptureThread::join() {
  if (thread_.joinable()) thread_.join();
}

bool CaptureThread::joinBy(SteadyClock::time_point deadline) {
  bool ended = true;
  {
    std::unique_lock lock(end_->mutex);
    ended = end_->ended.wait_until(lock, deadline, [this] { return end_->done; });
    if (!ended) {
      end_->leftBehind = true;
      thread_.detach();
      background::detachedStarted();
    }
  }
  if (ended) thread_.join();
  return ended;
}

std::shared_ptr<CaptureThread::End> CaptureThread::leftBehind() const {
  std::lock_guard lock(end_->mutex);
  return end_->leftBehind ? end_ : nullptr;
}

bool CaptureThread::handOver(std::function<void()> last) {
  std::lock_guard lock(end_->mutex);
  if (!end_->leftBehind || end_->done) return false;
  end_->custody = std::move(last);
  return true;
}

}  // namespace vigil
