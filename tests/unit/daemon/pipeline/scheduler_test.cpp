#include "daemon/pipeline/scheduler.h"

#include <gtest/gtest.h>

#include <map>
#include <thread>

namespace vigil {
namespace {

using namespace std::chrono_literals;

FrameHandle frameFrom(FramePool& pool, std::uint64_t sequence) {
  auto h = pool.acquire();
  EXPECT_TRUE(h.has_value());
  (*h)->sequence = sequence;
  return std::move(*h);
}

TEST(FramePoolTest, HandlesReturnFramesAndEmptyPoolRefuses) {
  auto pool = FramePool::create(2);
  auto a = pool->acquire();
  auto b = pool->acquire();
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(pool->acquire().has_value());
  EXPECT_EQ(pool->available(), 0U);
  a.reset();
  EXPECT_EQ(pool->available(), 1U);
  FrameHandle moved = std::move(*b);
  EXPECT_EQ(pool->available(), 1U);
  moved = FrameHandle();
  EXPECT_EQ(pool->available(), 2U);
}

TEST(FramePoolTest, FrameStorageIsReused) {
  auto pool = FramePool::create(1);
  const void* data = nullptr;
  {
    auto h = pool->acquire();
    data = (*h)->picture.bgrForWriting(cv::Size(64, 48)).data;
  }
  auto h = pool->acquire();
  EXPECT_EQ((*h)->picture.bgrForWriting(cv::Size(64, 48)).data, data);
}

TEST(SchedulerTest, NewestFrameWinsAndReplacedOnesAreCountedSkipped) {
  Scheduler s;
  auto pool = FramePool::create(3);
  auto cam = std::make_shared<CameraChannel>("a", 1000);
  s.attach(cam);
  s.offer(*cam, frameFrom(*pool, 1));
  s.offer(*cam, frameFrom(*pool, 2));
  s.offer(*cam, frameFrom(*pool, 3));
  EXPECT_EQ(cam->counters().skipped.load(), 2U);
  EXPECT_EQ(pool->available(), 2U) << "replaced frames go back to the pool at once";
  auto job = s.next(0ms);
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->frame->sequence, 3U);
  EXPECT_FALSE(s.next(0ms).has_value()) << "the slot is empty until the next frame";
}

// The sequence number of the frame next(0ms) hands out now; 0 when none is due.
std::uint64_t servedNow(Scheduler& s) {
  auto job = s.next(0ms);
  return job ? job->frame->sequence : 0;
}

// On a fake clock: what is due when is exact, whatever the load on the machine or a sanitizer
// does to timing.
TEST(SchedulerTest, CameraIsNotServedBeforeItsPeriod) {
  auto now = Scheduler::Clock::time_point() + 1h;
  Scheduler s([&now] { return now; });
  auto pool = FramePool::create(3);
  auto cam = std::make_shared<CameraChannel>("a", 10);  // every 100 ms
  s.attach(cam);
  s.offer(*cam, frameFrom(*pool, 1));
  EXPECT_EQ(servedNow(s), 1U) << "due at once when attached";
  s.offer(*cam, frameFrom(*pool, 2));
  now += 99ms;
  EXPECT_EQ(servedNow(s), 0U) << "99 ms after the first: not due yet";
  now += 1ms;
  EXPECT_EQ(servedNow(s), 2U) << "due 100 ms after the first";
}

TEST(SchedulerTest, ACameraServedLateKeepsItsBeat) {
  auto now = Scheduler::Clock::time_point() + 1h;
  Scheduler s([&now] { return now; });
  auto pool = FramePool::create(3);
  auto cam = std::make_shared<CameraChannel>("a", 10);  // every 100 ms
  s.attach(cam);
  s.offer(*cam, frameFrom(*pool, 1));
  EXPECT_EQ(servedNow(s), 1U);  // at 0 ms: due next at 100 ms
  now += 130ms;
  s.offer(*cam, frameFrom(*pool, 2));
  EXPECT_EQ(servedNow(s), 2U) << "30 ms late";
  s.offer(*cam, frameFrom(*pool, 3));
  now += 69ms;
  EXPECT_EQ(servedNow(s), 0U) << "199 ms";
  now += 1ms;
  EXPECT_EQ(servedNow(s), 3U) << "200 ms: on the camera's beat, not 100 ms after being served";
}

TEST(SchedulerTest, OverloadedDetectorServesCamerasRoundRobin) {
  // Three cameras always have a frame and are always due (1000 fps asked): the one due the
  // longest goes first, so service alternates a, b, c, a, b, c ...
  Scheduler s;
  auto pool = FramePool::create(8);
  std::vector<std::shared_ptr<CameraChannel>> cams{std::make_shared<CameraChannel>("a", 1000),
                                                   std::make_shared<CameraChannel>("b", 1000),
                                                   std::make_shared<CameraChannel>("c", 1000)};
  for (auto& c : cams) s.attach(c);
  std::map<std::string, int> served;
  std::string order;
  for (int i = 0; i < 30; ++i) {
    for (auto& c : cams) s.offer(*c, frameFrom(*pool, static_cast<std::uint64_t>(i)));
    auto job = s.next(100ms);
    ASSERT_TRUE(job.has_value());
    served[job->camera->name()]++;
    order += job->camera->name();
    std::this_thread::sleep_for(2ms);  // the "inference"
  }
  EXPECT_EQ(served["a"], 10);
  EXPECT_EQ(served["b"], 10);
  EXPECT_EQ(served["c"], 10);
  EXPECT_EQ(order.substr(0, 6), "abcabc");
}

TEST(SchedulerTest, OverloadedDetectorSharesItsInferencesNotItsDetections) {
  // `far` detects on regions, three inferences a detection; `door` on its whole picture, one.
  // Both always have a frame and are always due: each gets about half the inferences.
  auto now = Scheduler::Clock::time_point{};
  Scheduler s([&] { return now; });
  auto pool = FramePool::create(4);
  auto far = std::make_shared<CameraChannel>("far", 1000);
  auto door = std::make_shared<CameraChannel>("door", 1000);
  s.attach(far);
  s.attach(door);
  std::map<std::string, int> detections;
  std::map<std::string, int> inferences;
  for (int i = 0; i < 40; ++i) {
    s.offer(*far, frameFrom(*pool, static_cast<std::uint64_t>(i)));
    s.offer(*door, frameFrom(*pool, static_cast<std::uint64_t>(i)));
    auto job = s.next(0ms);
    ASSERT_TRUE(job.has_value());
    const int cost = job->camera == far ? 3 : 1;
    s.charge(*job->camera, static_cast<std::uint64_t>(cost));
    detections[job->camera->name()]++;
    inferences[job->camera->name()] += cost;
    now += 10ms;
  }
  EXPECT_EQ(detections["far"], 10);
  EXPECT_EQ(detections["door"], 30);
  EXPECT_NEAR(inferences["far"], inferences["door"], 3);
}

TEST(SchedulerTest, ACameraBackFromAQuietStretchGetsNoBacklogOfTurns) {
  auto now = Scheduler::Clock::time_point{};
  Scheduler s([&] { return now; });
  auto pool = FramePool::create(6);
  auto a = std::make_shared<CameraChannel>("a", 1000);
  auto b = std::make_shared<CameraChannel>("b", 1000);
  auto quiet = std::make_shared<CameraChannel>("quiet", 1000);
  for (const auto& c : {a, b, quiet}) s.attach(c);
  auto serve = [&](const std::vector<std::shared_ptr<CameraChannel>>& offering) {
    for (const auto& c : offering) s.offer(*c, frameFrom(*pool, 0));
    auto job = s.next(0ms);
    EXPECT_TRUE(job.has_value());
    if (!job) return std::string();
    s.charge(*job->camera, 1);
    now += 10ms;
    return job->camera->name();
  };
  // a and b alone for 100 detections (quiet is gated: no frame).
  for (int i = 0; i < 100; ++i) serve({a, b});
  // quiet comes back: it goes first for at most kCatchUp turns, then all three take turns.
  std::string order;
  for (int i = 0; i < 30; ++i) order += serve({a, b, quiet}).front();
  const auto firstOther = order.find_first_not_of('q');
  EXPECT_LE(firstOther, static_cast<std::size_t>(Scheduler::kCatchUp) + 1) << order;
  EXPECT_EQ(order.substr(order.size() - 6).find("qq"), std::string::npos) << order;
}

TEST(SchedulerTest, StopWakesAWaitingWorkerAndDetachDropsTheFrame) {
  Scheduler s;
  auto pool = FramePool::create(2);
  auto cam = std::make_shared<CameraChannel>("a", 5);
  s.attach(cam);
  s.offer(*cam, frameFrom(*pool, 1));
  s.detach(cam);
  EXPECT_EQ(pool->available(), 2U);
  s.offer(*cam, frameFrom(*pool, 2));  // ignored: not attached
  EXPECT_EQ(pool->available(), 2U);
  std::thread stopper([&] {
    std::this_thread::sleep_for(50ms);
    s.stop();
  });
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(s.next(10000ms).has_value());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5000ms);
  stopper.join();
}

}  // namespace
}  // namespace vigil
