#include "daemon/events/presence_tracker.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "tests/unit/daemon/events/event_test_clock.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::system_clock;

using namespace event_test;

// A detection in pixels of the kWidth x kHeight frame.
Detection box(float x, float y, float w, float h, float score = 0.9F, int classId = 0) {
  return Detection{Box{x, y, w, h}, score, classId};
}

// A person 0.08 wide and 0.4 high (normalized) whose feet are at (footX, footY).
Detection standingAt(float footX, float footY, float score = 0.9F) {
  return box(footX * kWidth - 40, footY * kHeight - 200, 80, 200, score);
}

// "new@camera,update@porch": the kinds and trackers of events, for readable failures.
std::string kinds(const std::vector<PresenceEvent>& events) {
  std::string s;
  for (const PresenceEvent& e : events) {
    if (!s.empty()) {
      s += ',';
    }
    s += e.type == PresenceEventType::kNew      ? "new@"
         : e.type == PresenceEventType::kUpdate ? "update@"
                                                : "end@";
    s += e.zone.empty() ? "camera" : e.zone;
  }
  return s;
}

Polygon rect(float x0, float y0, float x1, float y1) {
  return Polygon{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}};
}

// One camera "front" fed frames at explicit times; a frame's sequence is its time in ms so
// bestFrame reads as the time of the best frame.
class Rig {
 public:
  explicit Rig(PresenceSettings settings = {}, std::vector<ZoneSpec> zones = {},
               std::vector<Polygon> masks = {})
      : tracker_("front", settings, std::move(zones), std::move(masks)) {}

  std::vector<PresenceEvent> frame(int ms, const std::vector<Detection>& detections) {
    std::vector<PresenceEvent> out;
    tracker_.observe(
        TrackedFrame{monotonicAt(ms), at(ms + wallStep_), static_cast<std::uint64_t>(ms),
                     static_cast<std::uint64_t>(ms), kWidth, kHeight, &detections},
        out);
    return out;
  }

  std::vector<PresenceEvent> tick(int ms) {
    std::vector<PresenceEvent> out;
    tracker_.tick(monotonicAt(ms), out);
    return out;
  }

  // From now on the wall clock reads `ms` more (less, when negative) than the monotonic one:
  // NTP stepped it.
  void stepWallClock(int ms) { wallStep_ += ms; }

  PresenceTracker& tracker() { return tracker_; }

 private:
  int wallStep_ = 0;
  PresenceTracker tracker_;
};

const std::vector<Detection> kNobody;

TEST(PresenceTrackerTest, NewAfterMinFramesConsecutiveAndEmptyFrameResetsStreak) {
  PresenceSettings settings;
  settings.minFrames = 3;
  Rig rig(settings);
  const std::vector<Detection> one{box(100, 50, 100, 300)};

  EXPECT_EQ(kinds(rig.frame(0, one)), "");
  EXPECT_EQ(kinds(rig.frame(100, one)), "");
  EXPECT_EQ(kinds(rig.frame(200, kNobody)), "") << "an empty frame resets the streak";
  EXPECT_EQ(kinds(rig.frame(300, one)), "");
  EXPECT_EQ(kinds(rig.frame(400, one)), "");
  EXPECT_FALSE(rig.tracker().state().present);
  EXPECT_EQ(rig.tracker().state().count, 0);

  auto events = rig.frame(500, one);
  ASSERT_EQ(kinds(events), "new@camera");
  const PresenceEvent& e = events[0];
  EXPECT_EQ(e.zone, "");
  EXPECT_EQ(e.eventId, "front-camera-1700000000300-1");
  EXPECT_EQ(e.start, at(300)) << "start is the first frame of the streak, not of the first try";
  EXPECT_FALSE(e.end.has_value());
  EXPECT_EQ(e.count, 1);
  EXPECT_FLOAT_EQ(e.maxScore, 0.9F);
  EXPECT_EQ(e.bestFrame, 300U);
  ASSERT_EQ(e.boxes.size(), 1U);
  EXPECT_FLOAT_EQ(e.boxes[0].box.x, 0.1F);
  EXPECT_FLOAT_EQ(e.boxes[0].box.y, 0.1F);
  EXPECT_FLOAT_EQ(e.boxes[0].box.width, 0.1F);
  EXPECT_FLOAT_EQ(e.boxes[0].box.height, 0.6F);
  EXPECT_TRUE(rig.tracker().state().present);
  EXPECT_EQ(rig.tracker().state().count, 1);
}

TEST(PresenceTrackerTest, NewCarriesStreakMaxScoreAndTriggeringFrameBoxes) {
  Rig rig;
  EXPECT_EQ(kinds(rig.frame(1000, {box(100, 50, 100, 300, 0.95F)})), "");
  auto events = rig.frame(1100, {box(200, 100, 100, 300, 0.7F)});
  ASSERT_EQ(kinds(events), "new@camera");
  EXPECT_EQ(events[0].start, at(1000));
  EXPECT_FLOAT_EQ(events[0].maxScore, 0.95F);
  EXPECT_EQ(events[0].bestFrame, 1000U);
  ASSERT_EQ(events[0].boxes.size(), 1U);
  EXPECT_FLOAT_EQ(events[0].boxes[0].box.x, 0.2F);
  EXPECT_FLOAT_EQ(events[0].boxes[0].box.y, 0.2F);
}

TEST(PresenceTrackerTest, FrameStallRestartsStreak) {
  Rig rig;
  const std::vector<Detection> one{standingAt(0.5F, 0.9F)};
  EXPECT_EQ(kinds(rig.frame(0, one)), "");
  EXPECT_EQ(kinds(rig.frame(5000, one)), "") << "5 s apart is not consecutive";
  auto events = rig.frame(5100, one);
  ASSERT_EQ(kinds(events), "new@camera");
  EXPECT_EQ(events[0].start, at(5000));
}

TEST(PresenceTrackerTest, UpdateWhenCountChanges) {
  Rig rig;
  const std::vector<Detection> one{standingAt(0.2F, 0.9F)};
  const std::vector<Detection> two{standingAt(0.2F, 0.9F), standingAt(0.6F, 0.9F)};
  rig.frame(0, one);
  auto created = rig.frame(100, one);
  ASSERT_EQ(kinds(created), "new@camera");

  auto events = rig.frame(1100, two);
  ASSERT_EQ(kinds(events), "update@camera");
  EXPECT_EQ(events[0].eventId, created[0].eventId);
  EXPECT_EQ(events[0].start, at(0));
  EXPECT_FALSE(events[0].end.has_value());
  EXPECT_EQ(events[0].count, 2);
  ASSERT_EQ(events[0].boxes.size(), 2U);
  EXPECT_FLOAT_EQ(events[0].boxes[1].box.x, 0.56F);
  EXPECT_FLOAT_EQ(events[0].boxes[1].box.y, 0.5F);
  EXPECT_EQ(rig.tracker().state().count, 2);

  EXPECT_EQ(kinds(rig.frame(2200, two)), "") << "nothing changed";
  events = rig.frame(3300, one);
  ASSERT_EQ(kinds(events), "update@camera");
  EXPECT_EQ(events[0].count, 1);
  EXPECT_EQ(events[0].boxes.size(), 1U);
}

TEST(PresenceTrackerTest, UpdatesAreRateLimited) {
  Rig rig;  // updateInterval 1000 ms
  const std::vector<Detection> one{standingAt(0.2F, 0.9F)};
  const std::vector<Detection> two{standingAt(0.2F, 0.9F), standingAt(0.6F, 0.9F)};
  rig.frame(0, one);
  ASSERT_EQ(kinds(rig.frame(100, one)), "new@camera");

  EXPECT_EQ(kinds(rig.frame(300, two)), "") << "200 ms after new";
  EXPECT_EQ(rig.tracker().state().count, 2) << "the state follows frames even when quiet";
  EXPECT_EQ(kinds(rig.frame(1099, two)), "");
  auto events = rig.frame(1100, two);
  ASSERT_EQ(kinds(events), "update@camera") << "1000 ms after new";
  EXPECT_EQ(events[0].count, 2);

  // A change that is undone within the interval is never published.
  EXPECT_EQ(kinds(rig.frame(1200, one)), "");
  EXPECT_EQ(kinds(rig.frame(1300, two)), "");
  // A suppressed change goes out at the first frame with persons after the interval.
  EXPECT_EQ(kinds(rig.frame(1400, one)), "");
  EXPECT_EQ(kinds(rig.frame(2150, kNobody)), "") << "a frame without persons emits no update";
  events = rig.frame(2200, one);
  ASSERT_EQ(kinds(events), "update@camera");
  EXPECT_EQ(events[0].count, 1);
}

TEST(PresenceTrackerTest, RisingMaxScoreEmitsUpdateAndMovesBestFrame) {
  Rig rig;
  rig.frame(0, {standingAt(0.5F, 0.9F, 0.7F)});
  ASSERT_EQ(kinds(rig.frame(100, {standingAt(0.5F, 0.9F, 0.7F)})), "new@camera");
  EXPECT_EQ(kinds(rig.frame(1200, {standingAt(0.5F, 0.9F, 0.6F)})), "") << "lower score";

  auto events = rig.frame(2300, {standingAt(0.5F, 0.9F, 0.8F)});
  ASSERT_EQ(kinds(events), "update@camera");
  EXPECT_EQ(events[0].count, 1);
  EXPECT_FLOAT_EQ(events[0].maxScore, 0.8F);
  EXPECT_EQ(events[0].bestFrame, 2300U);

  EXPECT_EQ(kinds(rig.frame(3400, {standingAt(0.5F, 0.9F, 0.75F)})), "");
  events = rig.tick(3400 + 5000);
  ASSERT_EQ(kinds(events), "end@camera");
  EXPECT_FLOAT_EQ(events[0].maxScore, 0.8F);
  EXPECT_EQ(events[0].bestFrame, 2300U);
  EXPECT_EQ(events[0].end, at(3400));
}

TEST(PresenceTrackerTest, EndsClearAfterTheLastFrameWithAPerson) {
  Rig rig;  // clearAfter 5000 ms
  const std::vector<Detection> one{standingAt(0.5F, 0.9F)};
  rig.frame(0, one);
  auto created = rig.frame(100, one);
  ASSERT_EQ(kinds(created), "new@camera");
  EXPECT_EQ(kinds(rig.frame(600, one)), "");
  EXPECT_EQ(kinds(rig.frame(1000, kNobody)), "");
  EXPECT_EQ(kinds(rig.frame(5599, kNobody)), "");
  EXPECT_TRUE(rig.tracker().state().present) << "grace period";
  EXPECT_EQ(rig.tracker().state().count, 1) << "the count of the latest frame with a person";

  auto events = rig.frame(5600, kNobody);
  ASSERT_EQ(kinds(events), "end@camera");
  const PresenceEvent& e = events[0];
  EXPECT_EQ(e.eventId, created[0].eventId);
  EXPECT_EQ(e.start, at(0));
  ASSERT_TRUE(e.end.has_value());
  EXPECT_EQ(*e.end, at(600));
  EXPECT_EQ(e.count, 0);
  EXPECT_FLOAT_EQ(e.maxScore, 0.9F);
  EXPECT_TRUE(e.boxes.empty());
  EXPECT_FALSE(rig.tracker().state().present);
  EXPECT_EQ(rig.tracker().state().count, 0);
  EXPECT_EQ(kinds(rig.frame(6000, kNobody)), "") << "ends once";
}

// Boxes without a real-time clock set the time by NTP after booting: the wall clock steps. A
// step back would keep a person who left ON for the step plus clear_after, a step forward would
// end the event at once and reopen it; durations run on the monotonic clock, so neither happens,
// and the messages say the wall clock's times as they were read.
TEST(PresenceTrackerTest, AWallClockStepChangesNoDecision) {
  Rig rig;  // clear_after 5 s
  const std::vector<Detection> one{standingAt(0.5F, 0.9F)};
  rig.frame(0, one);
  ASSERT_EQ(kinds(rig.frame(100, one)), "new@camera");
  rig.stepWallClock(3600 * 1000);  // forward an hour
  EXPECT_EQ(kinds(rig.frame(200, one)), "") << "the same event goes on";
  EXPECT_EQ(kinds(rig.tick(300)), "");
  rig.stepWallClock(-2 * 3600 * 1000);  // then back two hours
  EXPECT_EQ(kinds(rig.frame(400, one)), "");
  EXPECT_EQ(kinds(rig.tick(5399)), "");
  auto events = rig.tick(5400);  // clear_after after the last person, on the monotonic clock
  ASSERT_EQ(kinds(events), "end@camera") << "the step back kept the person present";
  EXPECT_EQ(events[0].start, at(0));
  EXPECT_EQ(events[0].end, at(400 - 3600 * 1000)) << "the wall clock as read at that frame";
}

TEST(PresenceTrackerTest, TickEndsTheEventWhenFramesStop) {
  Rig rig;
  const std::vector<Detection> one{standingAt(0.5F, 0.9F)};
  rig.frame(0, one);
  ASSERT_EQ(kinds(rig.frame(100, one)), "new@camera");
  EXPECT_EQ(kinds(rig.tick(5099)), "");
  auto events = rig.tick(5100);
  ASSERT_EQ(kinds(events), "end@camera");
  EXPECT_EQ(events[0].end, at(100));
  EXPECT_FALSE(rig.tracker().state().present);
  EXPECT_EQ(kinds(rig.tick(9000)), "");

  // The camera comes back: a new event needs a new streak.
  EXPECT_EQ(kinds(rig.frame(10000, one)), "");
  events = rig.frame(10100, one);
  ASSERT_EQ(kinds(events), "new@camera");
  EXPECT_EQ(events[0].start, at(10000));
}

TEST(PresenceTrackerTest, PersonBackAfterLongGapEndsOldEventBeforeANewStreak) {
  Rig rig;
  const std::vector<Detection> one{standingAt(0.5F, 0.9F)};
  rig.frame(0, one);
  ASSERT_EQ(kinds(rig.frame(100, one)), "new@camera");
  auto events = rig.frame(8000, one);
  ASSERT_EQ(kinds(events), "end@camera");
  EXPECT_EQ(events[0].end, at(100));
  events = rig.frame(8100, one);
  ASSERT_EQ(kinds(events), "new@camera");
  EXPECT_EQ(events[0].start, at(8000));
}

TEST(PresenceTrackerTest, EventIdsAreUniqueAcrossConsecutiveEvents) {
  Rig rig;
  const std::vector<Detection> one{standingAt(0.5F, 0.9F)};
  std::vector<std::string> ids;
  for (int start : {0, 10000, 20000}) {
    rig.frame(start, one);
    auto events = rig.frame(start + 100, one);
    ASSERT_EQ(kinds(events), "new@camera");
    ids.push_back(events[0].eventId);
    events = rig.tick(start + 100 + 5000);
    ASSERT_EQ(kinds(events), "end@camera");
    EXPECT_EQ(events[0].eventId, ids.back());
  }
  EXPECT_EQ(
      ids, (std::vector<std::string>{"front-camera-1700000000000-1", "front-camera-1700000010000-2",
                                     "front-camera-1700000020000-3"}));
}

TEST(PresenceTrackerTest, FiltersByClassScoreAndArea) {
  PresenceSettings settings;
  settings.minScore = 0.5F;
  settings.minArea = 0.02F;  // 10000 px of the 1000 x 500 frame
  Rig rig(settings);
  const std::vector<Detection> filtered{
      box(0, 0, 200, 200, 0.49F),                                        // below minScore
      box(300, 0, 200, 200, 0.99F, 1),                                   // not a person
      box(600, 0, 99, 100, 0.99F),                                       // 9900 px: too small
      box(-90, 0, 100, 200, 0.99F),                                      // 10 x 200 px in the frame
      box(700, 200, 200, 200, std::numeric_limits<float>::quiet_NaN()),  // broken output
  };
  EXPECT_EQ(kinds(rig.frame(0, filtered)), "");
  EXPECT_EQ(kinds(rig.frame(100, filtered)), "");
  EXPECT_EQ(kinds(rig.frame(200, filtered)), "");
  EXPECT_FALSE(rig.tracker().state().present);

  std::vector<Detection> all = filtered;
  all.push_back(box(0, 300, 200, 200, 0.5F));    // exactly minScore
  all.push_back(box(800, 300, 120, 100, 0.6F));  // 12000 px
  rig.frame(300, all);
  auto events = rig.frame(400, all);
  ASSERT_EQ(kinds(events), "new@camera");
  EXPECT_EQ(events[0].count, 2);
  EXPECT_FLOAT_EQ(events[0].maxScore, 0.6F);
  ASSERT_EQ(events[0].boxes.size(), 2U);
  EXPECT_FLOAT_EQ(events[0].boxes[0].box.x, 0.0F);
  EXPECT_FLOAT_EQ(events[0].boxes[1].box.x, 0.8F);
}

TEST(PresenceTrackerTest, FrameWithoutDetectionsOrSizeCountsNobody) {
  Rig rig;
  const std::vector<Detection> one{standingAt(0.5F, 0.9F)};
  std::vector<PresenceEvent> out;
  rig.frame(0, one);
  rig.tracker().observe(TrackedFrame{monotonicAt(50), at(50), 50, 50, kWidth, kHeight, nullptr},
                        out);
  EXPECT_EQ(kinds(rig.frame(100, one)), "") << "the null frame reset the streak";
  rig.tracker().observe(TrackedFrame{monotonicAt(150), at(150), 150, 150, 0, 0, &one}, out);
  EXPECT_EQ(kinds(rig.frame(200, one)), "") << "the sizeless frame reset the streak";
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(kinds(rig.frame(300, one)), "new@camera");
}

TEST(PresenceTrackerTest, ZoneTestsTheBottomCentrePoint) {
  // The upper half of the frame.
  Rig rig({}, {ZoneSpec{"yard", rect(0.0F, 0.0F, 1.0F, 0.5F)}});
  // Head at y 0.1 and the box's centre at y 0.35 inside the zone, feet at y 0.6 outside.
  const Detection headIn = box(150, 50, 100, 250);
  const Detection feetIn = standingAt(0.7F, 0.45F);

  EXPECT_EQ(kinds(rig.frame(0, {headIn})), "");
  EXPECT_EQ(kinds(rig.frame(100, {headIn})), "new@camera");
  EXPECT_EQ(kinds(rig.frame(200, {headIn})), "");
  EXPECT_FALSE(rig.tracker().state("yard").present);

  EXPECT_EQ(kinds(rig.frame(300, {headIn, feetIn})), "");
  auto events = rig.frame(400, {headIn, feetIn});
  ASSERT_EQ(kinds(events), "new@yard") << "the camera's count change waits for its interval";
  EXPECT_EQ(events[0].zone, "yard");
  EXPECT_EQ(events[0].eventId, "front-yard-1700000000300-1");
  EXPECT_EQ(events[0].start, at(300));
  EXPECT_EQ(events[0].count, 1);
  ASSERT_EQ(events[0].boxes.size(), 1U);
  EXPECT_FLOAT_EQ(events[0].boxes[0].box.x, 0.66F);
  EXPECT_FLOAT_EQ(events[0].boxes[0].box.y, 0.05F);
  EXPECT_EQ(rig.tracker().state("yard").count, 1);
  EXPECT_EQ(rig.tracker().state().count, 2);
}

TEST(PresenceTrackerTest, PersonCutOffByTheBottomEdgeStandsInAZoneDrawnToThatEdge) {
  Rig rig({}, {ZoneSpec{"path", rect(0.0F, 0.5F, 1.0F, 1.0F)}});
  const std::vector<Detection> close{box(400, 300, 200, 260)};  // 60 px below the frame
  rig.frame(0, close);
  auto events = rig.frame(100, close);
  ASSERT_EQ(kinds(events), "new@camera,new@path");
  ASSERT_EQ(events[1].boxes.size(), 1U);
  EXPECT_FLOAT_EQ(events[1].boxes[0].box.y, 0.6F);
  EXPECT_FLOAT_EQ(events[1].boxes[0].box.height, 0.4F) << "clipped to the frame";
}

TEST(PresenceTrackerTest, MasksIgnorePersonsStandingInThem) {
  // Mask the left quarter; a zone over the whole frame is masked too.
  Rig rig({}, {ZoneSpec{"all", rect(0.0F, 0.0F, 1.0F, 1.0F)}}, {rect(0.0F, 0.0F, 0.25F, 1.0F)});
  const Detection inMask = standingAt(0.1F, 0.9F);
  // Its box reaches into the mask (x 0.2 .. 0.4) but it stands at x 0.3.
  const Detection overlapping = box(200, 100, 200, 300);

  EXPECT_EQ(kinds(rig.frame(0, {inMask})), "");
  EXPECT_EQ(kinds(rig.frame(100, {inMask})), "");
  EXPECT_EQ(kinds(rig.frame(200, {inMask})), "");
  EXPECT_FALSE(rig.tracker().state().present);
  EXPECT_FALSE(rig.tracker().state("all").present);

  rig.frame(300, {inMask, overlapping});
  auto events = rig.frame(400, {inMask, overlapping});
  ASSERT_EQ(kinds(events), "new@camera,new@all");
  EXPECT_EQ(events[0].count, 1);
  EXPECT_EQ(events[1].count, 1);
  ASSERT_EQ(events[0].boxes.size(), 1U);
  EXPECT_FLOAT_EQ(events[0].boxes[0].box.x, 0.2F);
}

TEST(PresenceTrackerTest, ZoneAndCameraTrackersAreIndependent) {
  Rig rig({}, {ZoneSpec{"porch", rect(0.5F, 0.0F, 1.0F, 1.0F)},
               ZoneSpec{"drive", rect(0.0F, 0.0F, 0.5F, 1.0F)}});
  EXPECT_EQ(rig.tracker().zoneNames(), (std::vector<std::string>{"porch", "drive"}));
  const std::vector<Detection> right{standingAt(0.8F, 0.9F)};
  const std::vector<Detection> left{standingAt(0.2F, 0.9F)};

  rig.frame(0, right);
  auto events = rig.frame(100, right);
  ASSERT_EQ(kinds(events), "new@camera,new@porch");
  EXPECT_EQ(events[0].eventId, "front-camera-1700000000000-1");
  EXPECT_EQ(events[1].eventId, "front-porch-1700000000000-1");

  // The person walks to the left half: the camera event goes on, the porch one ends.
  EXPECT_EQ(kinds(rig.frame(1000, left)), "");
  events = rig.frame(2000, left);
  ASSERT_EQ(kinds(events), "new@drive");
  EXPECT_EQ(events[0].start, at(1000));
  EXPECT_EQ(kinds(rig.frame(5099, left)), "");
  events = rig.frame(5100, left);
  ASSERT_EQ(kinds(events), "end@porch");
  EXPECT_EQ(events[0].end, at(100));
  EXPECT_FALSE(rig.tracker().state("porch").present);
  EXPECT_TRUE(rig.tracker().state("drive").present);
  EXPECT_TRUE(rig.tracker().state().present);
  EXPECT_EQ(rig.tracker().state().count, 1);
  EXPECT_FALSE(rig.tracker().state("garage").present) << "unknown zone";

  events = rig.tick(5100 + 5000);
  EXPECT_EQ(kinds(events), "end@camera,end@drive");
}

TEST(PresenceTrackerTest, ContainsOnAConcavePolygon) {
  // A U: two arms joined at the bottom, the notch between them open at the top.
  const Polygon u{{0.1F, 0.1F}, {0.3F, 0.1F}, {0.3F, 0.7F}, {0.7F, 0.7F},
                  {0.7F, 0.1F}, {0.9F, 0.1F}, {0.9F, 0.9F}, {0.1F, 0.9F}};
  EXPECT_TRUE(contains(u, {0.2F, 0.3F})) << "left arm";
  EXPECT_TRUE(contains(u, {0.8F, 0.3F})) << "right arm";
  EXPECT_FALSE(contains(u, {0.5F, 0.3F})) << "the notch";
  EXPECT_TRUE(contains(u, {0.5F, 0.8F})) << "the bottom";
  EXPECT_TRUE(contains(u, {0.2F, 0.7F})) << "ray along the notch's bottom edge";
  EXPECT_FALSE(contains(u, {0.05F, 0.5F}));
  EXPECT_FALSE(contains(u, {0.95F, 0.5F}));
  EXPECT_FALSE(contains(u, {0.5F, 0.95F}));
  EXPECT_FALSE(contains(Polygon{{0.0F, 0.0F}, {1.0F, 1.0F}}, {0.5F, 0.5F})) << "no area";
}

}  // namespace
}  // namespace vigil
