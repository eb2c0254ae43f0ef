// Who counts for presence on one observed frame (FramePresence), on its own: an untracked
// camera's detections, a tracked camera's tracked persons with their ids, whatever the frame's
// detections say, frame after frame.
#include "daemon/events/frame_presence.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/unit/daemon/events/event_test_clock.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;

// Presence on "porch" that says `new` at its first frame with somebody, and updates a second on.
PresenceTracker porchPresence() {
  PresenceSettings settings;
  settings.minFrames = 1;
  settings.minScore = 0.5F;
  settings.updateInterval = 1s;
  settings.clearAfter = 5s;
  return PresenceTracker("porch", settings, {}, {});
}

// The porch's frame captured at `ms` (event_test's clock), id `ms + 7`, sequence `ms / 100`.
ObservedFrame porchFrame(int ms, const std::vector<Detection>* detections,
                         const std::vector<TrackedPerson>* persons = nullptr) {
  ObservedFrame f;
  f.camera = "porch";
  f.sequence = static_cast<std::uint64_t>(ms / 100);
  f.id = static_cast<std::uint64_t>(ms) + 7;
  f.width = event_test::kWidth;
  f.height = event_test::kHeight;
  f.captureTime = event_test::at(ms);
  f.captureMonotonic = event_test::monotonicAt(ms);
  f.detections = detections;
  f.persons = persons;
  return f;
}

TrackedPerson trackedOnPorch(std::uint64_t id, Box box, float score) {
  TrackedPerson p;
  p.id = id;
  p.box = box;
  p.score = score;
  p.detected = true;
  return p;
}

TEST(FramePresenceTest, AnUntrackedCameraCountsTheFramesPersonDetectionsAtMinScore) {
  PresenceTracker tracker = porchPresence();
  FramePresence presence;
  const std::vector<Detection> detections{
      {Box{100, 50, 200, 400}, 0.9F, 0},   // a person
      {Box{500, 50, 200, 400}, 0.3F, 0},   // below min_score
      {Box{700, 50, 200, 400}, 0.95F, 2},  // not a person
  };
  std::vector<PresenceEvent> events;
  presence.observe(tracker, porchFrame(1000, &detections), events);
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].type, PresenceEventType::kNew);
  EXPECT_EQ(events[0].count, 1);
  EXPECT_TRUE(events[0].trackIds.empty()) << "no tracks on an untracked camera";
  EXPECT_EQ(events[0].start, event_test::at(1000));
  EXPECT_EQ(events[0].bestFrame, 1007U) << "the frame's id";
  ASSERT_EQ(events[0].boxes.size(), 1U);
  EXPECT_FLOAT_EQ(events[0].boxes[0].box.x, 0.1F) << "normalized by the frame's width";
  EXPECT_FLOAT_EQ(events[0].boxes[0].box.height, 0.8F) << "normalized by the frame's height";
}

TEST(FramePresenceTest, ATrackedCameraCountsItsTrackedPersonsWhateverTheDetectionsSay) {
  PresenceTracker tracker = porchPresence();
  FramePresence presence;
  // The detector saw three persons; tracking reports two, one of them on a weak detection (a
  // tracked person counts whatever its latest score).
  const std::vector<Detection> detections{{Box{0, 0, 100, 200}, 0.9F, 0},
                                          {Box{200, 0, 100, 200}, 0.9F, 0},
                                          {Box{400, 0, 100, 200}, 0.9F, 0}};
  const std::vector<TrackedPerson> persons{trackedOnPorch(11, Box{100, 50, 200, 400}, 0.2F),
                                           trackedOnPorch(12, Box{600, 50, 200, 400}, 0.9F)};
  std::vector<PresenceEvent> events;
  presence.observe(tracker, porchFrame(1000, &detections, &persons), events);
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].count, 2);
  EXPECT_EQ(events[0].trackIds, (std::vector<std::uint64_t>{11, 12}));
  ASSERT_EQ(events[0].boxes.size(), 2U);
  EXPECT_FLOAT_EQ(events[0].boxes[1].box.x, 0.6F) << "the tracked person's box, not a detection";
  EXPECT_FLOAT_EQ(events[0].maxScore, 0.9F);
}

TEST(FramePresenceTest, ATrackedCameraWithoutTrackedPersonsCountsNobodyWhomeverItDetected) {
  PresenceTracker tracker = porchPresence();
  FramePresence presence;
  const std::vector<Detection> detections{{Box{100, 50, 200, 400}, 0.9F, 0}};
  const std::vector<TrackedPerson> nobodyTracked;
  std::vector<PresenceEvent> events;
  presence.observe(tracker, porchFrame(1000, &detections, &nobodyTracked), events);
  EXPECT_TRUE(events.empty());
  EXPECT_FALSE(tracker.state().present);
}

// The scratch vectors are kept from frame to frame: the second frame's persons alone count.
TEST(FramePresenceTest, EachFrameCountsOnlyItsOwnTrackedPersons) {
  PresenceTracker tracker = porchPresence();
  FramePresence presence;
  const std::vector<TrackedPerson> two{trackedOnPorch(11, Box{100, 50, 200, 400}, 0.8F),
                                       trackedOnPorch(12, Box{600, 50, 200, 400}, 0.8F)};
  const std::vector<TrackedPerson> one{trackedOnPorch(12, Box{620, 50, 200, 400}, 0.8F)};
  std::vector<PresenceEvent> events;
  presence.observe(tracker, porchFrame(1000, nullptr, &two), events);
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].count, 2);
  events.clear();
  presence.observe(tracker, porchFrame(2500, nullptr, &one), events);
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].type, PresenceEventType::kUpdate);
  EXPECT_EQ(events[0].count, 1);
  EXPECT_EQ(events[0].trackIds, (std::vector<std::uint64_t>{12}));
  EXPECT_EQ(tracker.state().count, 1);
}

}  // namespace
}  // namespace vigil
