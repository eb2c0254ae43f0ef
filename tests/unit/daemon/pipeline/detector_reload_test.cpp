// A reload's new detector (DetectorReload), on its own, with loaders the test controls: loaded
// on a thread of its own and swapped into the worker, a failed load leaving the old one running,
// one NPU session at a time (the old one released first, loaded again when the new one fails),
// one load at a time, and a stop that abandons a load that does not end.
#include "daemon/pipeline/detector_reload.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <thread>

#include "detector/backend.h"
#include "foundation/background_work.h"
#include "tests/model_paths.h"
#include "tests/wait.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;

DetectorConfig cpuSection(float nms = 0.45F) {
  DetectorConfig c;
  c.model = testing::modelDir().string();
  c.backend = "cpu";
  c.nms = nms;
  return c;
}

Expected<LoadedDetector> refused(const DetectorConfig&) {
  return makeError(ErrorCode::kNotFound, "no such model");
}

// A worker that runs nothing (its detector is only given, taken and swapped here), and what the
// reload said, once.
struct ReloadRig {
  explicit ReloadRig(std::unique_ptr<Detector> first = nullptr)
      : worker(std::move(first), scheduler, [](FrameResult&&) {}) {}

  DetectorReload::Done done() {
    return [this](DetectorReload::Outcome o) {
      doneOn = std::this_thread::get_id();
      said.set_value(std::move(o));
    };
  }
  std::optional<DetectorReload::Outcome> outcome() {
    auto f = said.get_future();
    if (f.wait_for(testing::kDeadline) != std::future_status::ready) return std::nullopt;
    return f.get();
  }

  Scheduler scheduler;
  InferenceWorker worker;
  std::promise<DetectorReload::Outcome> said;
  std::thread::id doneOn;
};

TEST(DetectorReloadTest, TheNewDetectorLoadsOnAThreadOfItsOwnAndIsSwappedIntoTheWorker) {
  VIGIL_REQUIRE_MODEL();
  auto first = loadDetector(cpuSection());
  ASSERT_TRUE(first.has_value()) << first.error().message;
  ReloadRig rig(std::move(first->detector));
  DetectorReload reload(rig.worker, rig.done());
  ASSERT_TRUE(reload.begin(cpuSection(0.3F), cpuSection()));
  const auto outcome = rig.outcome();
  ASSERT_TRUE(outcome.has_value());
  EXPECT_TRUE(outcome->applied) << outcome->error;
  EXPECT_EQ(outcome->running, cpuSection(0.3F));
  EXPECT_EQ(outcome->error, "");
  ASSERT_TRUE(outcome->backend.has_value());
  EXPECT_EQ(outcome->backend->name, "cpu");
  EXPECT_GT(outcome->loadSeconds, 0);
  EXPECT_NE(rig.doneOn, std::this_thread::get_id()) << "said from the loader thread";
  EXPECT_TRUE(reload.stop());
  auto now = rig.worker.take();
  ASSERT_NE(now, nullptr);
  EXPECT_FLOAT_EQ(now->nmsIou(), 0.3F) << "the new section's detector";
}

TEST(DetectorReloadTest, AFailedLoadLeavesTheOldDetectorRunning) {
  VIGIL_REQUIRE_MODEL();
  auto first = loadDetector(cpuSection());
  ASSERT_TRUE(first.has_value()) << first.error().message;
  const Detector* old = first->detector.get();
  ReloadRig rig(std::move(first->detector));
  DetectorReload reload(rig.worker, rig.done(), refused);
  ASSERT_TRUE(reload.begin(cpuSection(0.3F), cpuSection()));
  const auto outcome = rig.outcome();
  ASSERT_TRUE(outcome.has_value());
  EXPECT_FALSE(outcome->applied);
  EXPECT_EQ(outcome->error, "no such model");
  EXPECT_EQ(outcome->running, cpuSection()) << "the old section runs on";
  EXPECT_FALSE(outcome->backend.has_value()) << "unchanged";
  EXPECT_TRUE(reload.stop());
  EXPECT_EQ(rig.worker.take().get(), old);
}

// Either section may hold an NPU session (npu, in a build with an NPU runtime): the worker gives
// up the old detector before the new one opens, and gets the old section's back when it fails.
TEST(DetectorReloadTest, WithAnNpuSessionTheOldDetectorGoesFirstAndComesBackWhenTheNewFails) {
  VIGIL_REQUIRE_MODEL();
  const auto table = backendTable();
  if (std::none_of(table.begin(), table.end(),
                   [](const BackendEntry& e) { return e.name == "npu"; })) {
    GTEST_SKIP() << "this build has no NPU runtime: npu never holds a session";
  }
  auto first = loadDetector(cpuSection());
  ASSERT_TRUE(first.has_value()) << first.error().message;
  ReloadRig rig(std::move(first->detector));
  std::atomic<bool> workerHadOneDuringTheNewLoad{true};
  DetectorConfig npu = cpuSection();
  npu.backend = "npu";
  DetectorReload reload(rig.worker, rig.done(), [&](const DetectorConfig& c) {
    if (c.backend == "npu") {
      auto held = rig.worker.take();  // what the worker holds while the new one opens
      workerHadOneDuringTheNewLoad = held != nullptr;
      return refused(c);
    }
    return loadDetector(c);
  });
  ASSERT_TRUE(reload.begin(npu, cpuSection()));
  const auto outcome = rig.outcome();
  ASSERT_TRUE(outcome.has_value());
  EXPECT_FALSE(workerHadOneDuringTheNewLoad.load()) << "one session at a time";
  EXPECT_FALSE(outcome->applied);
  EXPECT_EQ(outcome->error, "no such model");
  EXPECT_EQ(outcome->running, cpuSection());
  ASSERT_TRUE(outcome->backend.has_value()) << "the old section loaded again";
  EXPECT_EQ(outcome->backend->name, "cpu");
  EXPECT_TRUE(reload.stop());
  EXPECT_NE(rig.worker.take(), nullptr) << "never left without a detector";
}

TEST(DetectorReloadTest, OneLoadAtATimeAndNoneAfterTheStop) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  ReloadRig rig;
  DetectorReload reload(rig.worker, rig.done(), [released](const DetectorConfig& c) {
    released.wait();
    return refused(c);
  });
  ASSERT_TRUE(reload.begin(cpuSection(0.3F), cpuSection()));
  EXPECT_FALSE(reload.begin(cpuSection(0.2F), cpuSection())) << "a load is under way";
  release.set_value();
  ASSERT_TRUE(rig.outcome().has_value());
  EXPECT_TRUE(reload.stop());
  EXPECT_FALSE(reload.begin(cpuSection(0.2F), cpuSection())) << "stopped";
}

TEST(DetectorReloadTest, AStopWithNoLoadHasNothingToWaitFor) {
  ReloadRig rig;
  DetectorReload reload(rig.worker, rig.done(), refused);
  EXPECT_TRUE(reload.stop());
  EXPECT_EQ(reload.abandonedAfter(), std::nullopt);
}

// A session's creation cannot be cut: the stop waits its limit, then leaves the load behind,
// counted as background work; when it ends at last it touches neither the worker nor `done`.
TEST(DetectorReloadTest, AStopAbandonsALoadThatDoesNotEndAndItTouchesNothingAfterwards) {
  const int detachedBefore = background::detachedRunning();
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> loaderReturned{false};
  std::atomic<bool> doneCalled{false};
  Scheduler scheduler;
  InferenceWorker worker(nullptr, scheduler, [](FrameResult&&) {});
  {
    DetectorReload reload(
        worker, [&](DetectorReload::Outcome) { doneCalled = true; },
        [&, released](const DetectorConfig& c) {
          released.wait();
          loaderReturned = true;
          return refused(c);
        });
    ASSERT_TRUE(reload.begin(cpuSection(0.3F), cpuSection()));
    EXPECT_FALSE(reload.stop(10ms));
    ASSERT_TRUE(reload.abandonedAfter().has_value());
    EXPECT_GE(*reload.abandonedAfter(), 0.0);
    EXPECT_EQ(background::detachedRunning(), detachedBefore + 1);
    EXPECT_FALSE(reload.stop()) << "still abandoned";
  }  // the reload object goes; its load runs on
  release.set_value();
  EXPECT_TRUE(testing::waitUntil([&] { return background::detachedRunning() == detachedBefore; }));
  EXPECT_TRUE(loaderReturned.load());
  EXPECT_FALSE(doneCalled.load()) << "after the stop the load never calls done";
  EXPECT_EQ(worker.take(), nullptr) << "nor touches the worker";
}

}  // namespace
}  // namespace vigil
