// A camera's capture thread and its end (CaptureThread), on their own: joined when its body
// returns in time, else left behind (counted as background work) to run what its owner handed
// over when it ends at last, and a next thread of the camera that waits for it unless stopped.
#include "daemon/capture/camera/capture_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

#include "foundation/background_work.h"
#include "tests/log_capture.h"
#include "tests/wait.h"

namespace vigil {
namespace {

// A body that stays in its "read" until the test lets it go, as one stuck on a hung share.
struct StuckRead {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::function<void()> body() {
    return [released = released] { released.wait(); };
  }
};

bool endedOf(const std::shared_ptr<CaptureThread::End>& end) {
  std::lock_guard lock(end->mutex);
  return end->done;
}

TEST(CaptureThreadTest, TheBodyRunsOnItsOwnThreadAndJoinWaitsForIt) {
  CaptureThread thread;
  std::atomic<bool> ran{false};
  std::thread::id where;
  thread.start(
      [&] {
        where = std::this_thread::get_id();
        ran = true;
      },
      "door");
  EXPECT_TRUE(thread.joinable());
  thread.join();
  EXPECT_TRUE(ran.load());
  EXPECT_NE(where, std::this_thread::get_id());
  EXPECT_FALSE(thread.joinable());
  EXPECT_FALSE(thread.hasPredecessor());
}

TEST(CaptureThreadTest, AThreadEndingByTheDeadlineIsJoinedAndNotLeftBehind) {
  CaptureThread thread;
  thread.start([] {}, "door");
  EXPECT_TRUE(thread.joinBy(SteadyClock::now() + testing::kDeadline));
  EXPECT_FALSE(thread.joinable());
  EXPECT_EQ(thread.leftBehind(), nullptr);
  EXPECT_FALSE(thread.handOver([] {})) << "no thread left behind to hand anything to";
}

TEST(CaptureThreadTest, AThreadStuckPastTheDeadlineIsLeftBehindAndRunsWhatItIsHandedAtItsEnd) {
  testing::LogCapture log("capture");
  const int detachedBefore = background::detachedRunning();
  StuckRead stuck;
  CaptureThread thread;
  thread.start(stuck.body(), "door");
  EXPECT_FALSE(thread.joinBy(SteadyClock::now())) << "still in its read at the deadline";
  EXPECT_FALSE(thread.joinable()) << "detached";
  const auto end = thread.leftBehind();
  ASSERT_NE(end, nullptr);
  EXPECT_FALSE(endedOf(end));
  EXPECT_EQ(background::detachedRunning(), detachedBefore + 1) << "counted as background work";

  std::atomic<bool> custodyRan{false};
  EXPECT_TRUE(thread.handOver([&] { custodyRan = true; }));
  EXPECT_FALSE(custodyRan.load()) << "not before the thread ends";
  stuck.release.set_value();
  EXPECT_TRUE(testing::waitUntil([&] { return custodyRan.load(); }));
  EXPECT_TRUE(testing::waitUntil([&] { return background::detachedRunning() == detachedBefore; }));
  EXPECT_TRUE(endedOf(end));
  EXPECT_EQ(log.text(), "[cam=door] the capture thread left behind by a stop has ended\n");
  EXPECT_FALSE(thread.handOver([] {})) << "it has ended: the caller runs it itself";
}

TEST(CaptureThreadTest, TheNextThreadOfTheCameraWaitsForTheOneLeftBehind) {
  const int detachedBefore = background::detachedRunning();
  StuckRead stuck;
  CaptureThread first;
  first.start(stuck.body(), "door");
  ASSERT_FALSE(first.joinBy(SteadyClock::now()));
  const auto predecessor = first.leftBehind();

  CaptureThread next;
  std::atomic<bool> entered{false};
  std::atomic<bool> awaited{false};
  std::atomic<bool> predecessorDoneThen{false};
  const std::atomic<bool> stopping{false};
  next.start(
      [&] {
        entered = true;
        awaited = next.awaitPredecessor(stopping);
        predecessorDoneThen = endedOf(predecessor);
      },
      "door", predecessor);
  EXPECT_TRUE(next.hasPredecessor());
  ASSERT_TRUE(testing::waitUntil([&] { return entered.load(); }));
  stuck.release.set_value();
  next.join();
  EXPECT_TRUE(awaited.load());
  EXPECT_TRUE(predecessorDoneThen.load()) << "it returned before the thread left behind ended";
  EXPECT_TRUE(testing::waitUntil([&] { return background::detachedRunning() == detachedBefore; }));
}

TEST(CaptureThreadTest, AStopCutsTheWaitForTheThreadLeftBehindShort) {
  const int detachedBefore = background::detachedRunning();
  StuckRead stuck;
  CaptureThread first;
  first.start(stuck.body(), "door");
  ASSERT_FALSE(first.joinBy(SteadyClock::now()));

  CaptureThread next;
  std::atomic<bool> stopping{false};
  std::atomic<bool> awaited{true};
  next.start([&] { awaited = next.awaitPredecessor(stopping); }, "door", first.leftBehind());
  stopping = true;
  next.wakeAwaitPredecessor();
  next.join();
  EXPECT_FALSE(awaited.load()) << "stopped while the thread left behind still reads";
  EXPECT_FALSE(endedOf(first.leftBehind()));

  stuck.release.set_value();
  EXPECT_TRUE(testing::waitUntil([&] { return background::detachedRunning() == detachedBefore; }));
}

}  // namespace
}  // namespace vigil
