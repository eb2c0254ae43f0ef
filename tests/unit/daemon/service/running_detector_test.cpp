#include "daemon/service/running_detector.h"

#include <gtest/gtest.h>

#include "tests/model_paths.h"

namespace vigil {
namespace {

// What RunningDetector::start borrows besides the detector's settings.
struct DetectorRig {
  boost::asio::io_context io;
  Registry registry;
  Scheduler scheduler;
  EventPublisher publisher{EventPublisherSettings{}, nullptr};
  ResultPath results{publisher, [](const std::string&) { return ResultPath::StageHistograms{}; },
                     0.5F};
};

TEST(RunningDetectorTest, ADetectorThatDoesNotLoadLeavesNoWorker) {
  DetectorRig rig;
  RunningDetector detector(rig.registry, [](const DetectorConfig&) -> Expected<LoadedDetector> {
    return makeError(ErrorCode::kNotFound, "no model here");
  });
  EXPECT_FALSE(detector.start(DetectorConfig{}, rig.scheduler, rig.io, rig.results,
                              [](const DetectorReload::Outcome&) {}));
  EXPECT_FALSE(detector.worker());
  EXPECT_TRUE(detector.reloading() == nullptr);
}

TEST(RunningDetectorTest, RunsTheConfiguredBackendAndFollowsAReloadsOutcome) {
  ASSERT_EQ(testing::missingModelReason(), "");
  DetectorRig rig;
  RunningDetector detector(rig.registry);
  DetectorConfig config;
  config.model = testing::modelDir().string();
  config.backend = "cpu";
  ASSERT_TRUE(detector.start(config, rig.scheduler, rig.io, rig.results,
                             [](const DetectorReload::Outcome&) {}));
  ASSERT_TRUE(detector.worker());
  ASSERT_TRUE(detector.reloading() != nullptr);
  EXPECT_EQ(detector.backendStatus().inUse().name, "cpu");
  EXPECT_FALSE(detector.backendChanged());  // a configured backend never switches

  // A reload that did not load leaves the backend as it was.
  const BackendStatus::InUse before = detector.backendStatus().inUse();
  DetectorReload::Outcome failed;
  failed.running = config;
  failed.error = "no such model";
  detector.reloaded(failed);
  EXPECT_EQ(detector.backendStatus().inUse(), before);
  detector.watchLoad(SteadyClock::now());

  detector.reloading()->stop();
  detector.worker()->stop();
}

}  // namespace
}  // namespace vigil
