#include "daemon/events/zone_presence.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/unit/daemon/events/event_test_clock.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;
using namespace event_test;

PresenceSettings zonePresenceSettings() {
  PresenceSettings s;
  s.minFrames = 2;
  s.clearAfter = 2s;
  s.updateInterval = 1s;
  return s;
}

// A candidate whose feet stand at (x, y), normalized.
PresenceCandidate standingCandidate(float x, float y, float score, std::uint64_t trackId = 0) {
  return PresenceCandidate{Box{x - 0.05F, y - 0.3F, 0.1F, 0.3F}, Point{x, y}, score, trackId};
}

// Observes a frame at `ms` (its sequence and id are `ms`) with `candidates`.
std::vector<PresenceEvent> frameAt(ZonePresence& area, int ms,
                                   const std::vector<PresenceCandidate>& candidates) {
  std::vector<PresenceEvent> out;
  const auto n = static_cast<std::uint64_t>(ms);
  area.observe(TrackedFrame{monotonicAt(ms), at(ms), n, n, kWidth, kHeight, nullptr}, candidates,
               out);
  return out;
}

TEST(ZonePresenceTest, AStreakOfMinFramesOpensTheEventWithTheStreaksStartAndBestFrame) {
  ZonePresence camera("front", zonePresenceSettings());
  EXPECT_TRUE(frameAt(camera, 0, {standingCandidate(0.5F, 0.9F, 0.6F)}).empty());
  EXPECT_EQ(camera.bestFrame().value_or(99), 0U);  // the streak's best so far
  auto events = frameAt(camera, 100, {standingCandidate(0.5F, 0.9F, 0.8F, 7)});
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].type, PresenceEventType::kNew);
  EXPECT_EQ(events[0].eventId, "front-camera-1700000000000-1");
  EXPECT_EQ(events[0].start, at(0));
  EXPECT_FLOAT_EQ(events[0].maxScore, 0.8F);
  EXPECT_EQ(events[0].bestFrame, 100U);
  ASSERT_EQ(events[0].trackIds.size(), 1U);
  EXPECT_EQ(events[0].trackIds[0], 7U);
  const ZonePresence::State state = camera.state();
  EXPECT_TRUE(state.present);
  EXPECT_EQ(state.count, 1);
  EXPECT_EQ(state.startSequence, 0U);
}

TEST(ZonePresenceTest, UpdatesWaitForTheIntervalAndTheEndForClearAfter) {
  ZonePresence camera("front", zonePresenceSettings());
  frameAt(camera, 0, {standingCandidate(0.5F, 0.9F, 0.6F)});
  frameAt(camera, 100, {standingCandidate(0.5F, 0.9F, 0.6F)});  // new
  const auto two = std::vector<PresenceCandidate>{standingCandidate(0.2F, 0.9F, 0.6F),
                                                  standingCandidate(0.7F, 0.9F, 0.6F)};
  EXPECT_TRUE(frameAt(camera, 500, two).empty());  // changed, but too soon
  auto update = frameAt(camera, 1100, two);
  ASSERT_EQ(update.size(), 1U);
  EXPECT_EQ(update[0].type, PresenceEventType::kUpdate);
  EXPECT_EQ(update[0].count, 2);
  EXPECT_TRUE(frameAt(camera, 2500, two).empty());  // nothing new to say
  std::vector<PresenceEvent> out;
  camera.expire(monotonicAt(4400), out);
  EXPECT_TRUE(out.empty());
  camera.expire(monotonicAt(4500), out);
  ASSERT_EQ(out.size(), 1U);
  EXPECT_EQ(out[0].type, PresenceEventType::kEnd);
  EXPECT_EQ(out[0].end, at(2500));
  EXPECT_FALSE(camera.state().present);
  EXPECT_FALSE(camera.bestFrame().has_value());
}

TEST(ZonePresenceTest, AZoneCountsWhoStandsInItAndEndAllEndsItsEvent) {
  ZonePresence porch("front", "porch", Polygon{{0, 0}, {0.5F, 0}, {0.5F, 1}, {0, 1}},
                     zonePresenceSettings());
  EXPECT_EQ(porch.zone(), "porch");
  const auto outside = std::vector<PresenceCandidate>{standingCandidate(0.8F, 0.9F, 0.9F)};
  EXPECT_TRUE(frameAt(porch, 0, outside).empty());
  EXPECT_TRUE(frameAt(porch, 100, outside).empty());
  EXPECT_FALSE(porch.state().present);
  const auto both = std::vector<PresenceCandidate>{standingCandidate(0.2F, 0.9F, 0.7F),
                                                   standingCandidate(0.8F, 0.9F, 0.9F)};
  frameAt(porch, 200, both);
  auto events = frameAt(porch, 300, both);
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].eventId, "front-porch-1700000000200-1");
  EXPECT_EQ(events[0].zone, "porch");
  EXPECT_EQ(events[0].count, 1);
  ASSERT_EQ(events[0].boxes.size(), 1U);
  EXPECT_FLOAT_EQ(events[0].boxes[0].score, 0.7F);
  std::vector<PresenceEvent> out;
  porch.endAll(out);
  ASSERT_EQ(out.size(), 1U);
  EXPECT_EQ(out[0].type, PresenceEventType::kEnd);
  EXPECT_EQ(out[0].end, at(300));
  EXPECT_FALSE(porch.state().present);
}

}  // namespace
}  // namespace vigil
