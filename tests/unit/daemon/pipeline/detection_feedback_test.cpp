#include "daemon/pipeline/detection_feedback.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "daemon/pipeline/motion.h"
#include "daemon/pipeline/scheduler.h"

namespace vigil {
namespace {

// The camera's channel is the pipeline's DetectionFeedback: what the result path tells it
// through the interface is what the motion gate (personSaid) and the regions read.
TEST(DetectionFeedbackTest, ThePersonToldIsThePersonTheGateReads) {
  CameraChannel channel("door", 5.0);
  DetectionFeedback& feedback = channel;
  EXPECT_EQ(channel.personSaid(), DetectionFeedback::Person::kNone) << "nobody until told";
  feedback.tellPerson(DetectionFeedback::Person::kSeen);
  EXPECT_EQ(channel.personSaid(), DetectionFeedback::Person::kSeen);
  feedback.tellPerson(DetectionFeedback::Person::kPresent);
  EXPECT_EQ(channel.personSaid(), DetectionFeedback::Person::kPresent);
}

TEST(DetectionFeedbackTest, TracksAndPersonsToldBecomeTheNextDetectionsRegions) {
  const cv::Size picture(1920, 1080);
  CameraChannel channel("yard", 5.0);
  DetectionFeedback& feedback = channel;
  ASSERT_TRUE(channel.regions().decide(picture, {416, 416}));
  Track far;
  far.id = 7;
  far.box = {1500, 300, 20, 50};
  feedback.tellTracks({far});
  auto plan = channel.regions().plan(picture, 0.0);
  ASSERT_FALSE(plan.empty());
  EXPECT_EQ(plan[0].kind, RegionKind::kTrack);
  EXPECT_TRUE(plan[0].rect.contains({1510, 325})) << "the region is around the track told";
  // An untracked camera tells its persons instead: the region follows them.
  feedback.tellPersons({Detection{{100, 700, 20, 50}, 0.9F, 0}});
  plan = channel.regions().plan(picture, 0.2);
  ASSERT_FALSE(plan.empty());
  EXPECT_EQ(plan[0].kind, RegionKind::kTrack);
  EXPECT_TRUE(plan[0].rect.contains({110, 725}));
  EXPECT_FALSE(plan[0].rect.contains({1510, 325})) << "the persons told replace the tracks";
}

// What /metrics reads of the camera's pipeline: its frame counts, its regions' inferences by
// kind, its capture CPU, up and its gating state, one series per state.
TEST(CameraChannelTest, ReportsItsCountsRegionsAndGatingStateForMetrics) {
  CameraChannel channel("door", 5.0);
  channel.counters().captured = 12;
  channel.counters().up = true;
  channel.counters().motionState = static_cast<int>(MotionState::kIdle);
  FigureList figures;
  channel.report(figures);
  EXPECT_EQ(figures.countOf("captured"), 12U);
  EXPECT_EQ(figures.countOf("inferences", "whole"), 0U);
  std::map<std::string, double, std::less<>> levels;
  for (const FigureList::Figure& f : figures.figures()) {
    if (const auto* v = std::get_if<double>(&f.value)) {
      levels[std::string(f.name->metric) + "/" + f.labelValue] = *v;
    }
  }
  EXPECT_EQ(levels["vigil_camera_up/"], 1);
  EXPECT_EQ(levels["vigil_camera_motion_state/idle"], 1);
  EXPECT_EQ(levels["vigil_camera_motion_state/motion"], 0);
  EXPECT_EQ(levels.count("vigil_camera_capture_cpu_seconds_total/"), 1U);
}

}  // namespace
}  // namespace vigil
