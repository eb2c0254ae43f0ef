#include "daemon/events/person_tracks.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "daemon/events/presence_tracker.h"

namespace vigil {
namespace {

constexpr int kFrameW = 1000;
constexpr int kFrameH = 500;

// A person whose feet stand at x (normalized) near the bottom of a `width` x `height` frame.
Detection feetAt(float footX, float score = 0.9F, int width = kFrameW, int height = kFrameH) {
  const auto w = static_cast<float>(width);
  const auto h = static_cast<float>(height);
  return Detection{Box{(footX - 0.02F) * w, 0.6F * h, 0.04F * w, 0.3F * h}, score, 0};
}

TrackZone leftHalfZone(int minFrames = 2, std::optional<double> loiterAfter = std::nullopt) {
  return TrackZone{"left", {{0, 0}, {0.5F, 0}, {0.5F, 1}, {0, 1}}, minFrames, loiterAfter};
}

std::string describeEvents(const std::vector<ZoneEvent>& events) {
  std::string out;
  for (const ZoneEvent& e : events) {
    out += fmt::format("{}{} {} #{} at {:.1f}", out.empty() ? "" : ", ", zoneEventName(e.type),
                       e.zone, e.trackId, e.time);
  }
  return out;
}

TEST(PersonTracksTest, AWalkerEntersAfterMinFramesAndLeavesWhereTheZoneEnds) {
  PersonTracks tracks({}, {leftHalfZone(3)});
  std::vector<ZoneEvent> events;
  // 0.2 s apart, feet from x 0.30 to 0.70 in steps of 0.02.
  for (int i = 0; i <= 20; ++i) {
    tracks.update(0.2 * i, kFrameW, kFrameH, {feetAt(0.30F + 0.02F * static_cast<float>(i))},
                  events);
  }
  EXPECT_EQ(describeEvents(events), "enter left #1 at 0.4, leave left #1 at 2.2")
      << "inside on frames 0..10 (x < 0.5): entered on the third, left on the first outside";
  ASSERT_EQ(tracks.persons().size(), 1U);
  EXPECT_TRUE(tracks.persons()[0].zones.empty());
}

// A person partly out of the frame on the left (box -80..120 px of 1000): presence counted them
// in a zone starting at x 0.04 (the visible feet's centre, 0.06) while tracking placed their feet
// at the box's centre clamped to the frame (0.02) and listed no zone: an `events` person
// counted in the zone with "zones": []. Both now take the same standing point.
TEST(PersonTracksTest, APersonAZoneCountsIsInTheZoneForTrackingTooAtTheFramesEdge) {
  const Polygon edge{{0.04F, 0}, {0.5F, 0}, {0.5F, 1}, {0.04F, 1}};
  PersonTracks tracks({}, {TrackZone{"edge", edge, 1, std::nullopt}});
  PresenceSettings presence;
  presence.minFrames = 1;
  PresenceTracker zones("door", presence, {ZoneSpec("edge", edge)}, {});
  std::vector<ZoneEvent> events;
  std::vector<PresenceEvent> presenceEvents;
  const Detection halfOut{Box{-80, 200, 200, 250}, 0.9F, 0};
  for (int i = 0; i < 3; ++i) {
    tracks.update(0.2 * i, kFrameW, kFrameH, {halfOut}, events);
    std::vector<Detection> boxes;
    std::vector<std::uint64_t> ids;
    for (const TrackedPerson& p : tracks.persons()) {
      boxes.push_back(Detection{p.box, p.score, 0});
      ids.push_back(p.id);
    }
    const auto at = std::chrono::steady_clock::time_point(std::chrono::milliseconds(200 * i));
    zones.observe(TrackedFrame(at, std::chrono::system_clock::time_point(), 1 + i, 1 + i, kFrameW,
                               kFrameH, &boxes, &ids),
                  presenceEvents);
  }
  ASSERT_EQ(tracks.persons().size(), 1U);
  EXPECT_EQ(zones.state("edge").count, 1) << "presence counts the person in the zone";
  EXPECT_EQ(tracks.persons()[0].zones, std::vector<std::string>{"edge"})
      << "and tracking says the person is in it";
}

// "gate": a vertical line in the middle drawn top to bottom (x = 500 px of the 1000x500
// frame): walking right is `out`.
LineSpec gate() {
  LineSpec line;
  line.name = "gate";
  line.points = {{0.5, 0}, {0.5, 1}};
  return line;
}

TEST(PersonTracksTest, ATrackedPersonCrossingALineIsCountedOnceWithItsTrackAndBox) {
  PersonTracks tracks({}, {}, {}, {gate()});
  std::vector<ZoneEvent> events;
  std::vector<LineCrossingEvent> crossings;
  // Feet from x = 300 to 700 px in steps of 20 px, 0.2 s apart; then standing at 700.
  for (int i = 0; i <= 25; ++i) {
    const float x = 0.30F + 0.02F * static_cast<float>(std::min(i, 20));
    tracks.update(0.2 * i, kFrameW, kFrameH, {feetAt(x)}, events);
    crossings.insert(crossings.end(), tracks.crossings().begin(), tracks.crossings().end());
  }
  ASSERT_EQ(crossings.size(), 1U);
  EXPECT_EQ(crossings[0].line, "gate");
  EXPECT_EQ(crossings[0].direction, CrossingDirection::kOut);
  EXPECT_EQ(crossings[0].trackId, 1U);
  // Feet at 500 on frame 10 (on the line: skipped), 520 on frame 11: 20 px past the 8 px band.
  EXPECT_DOUBLE_EQ(crossings[0].time, 2.2);
  EXPECT_NEAR(crossings[0].box.x + crossings[0].box.width / 2, 520, 2);
  // A frame without persons reports no crossings of its own.
  tracks.update(5.4, kFrameW, kFrameH, {}, events);
  EXPECT_TRUE(tracks.crossings().empty());
}

// A line in fractions counts on frames of any size (a camera reconnected at another resolution,
// a detect stream): scaled to each size's pixels; a new size starts each track's side afresh.
TEST(PersonTracksTest, ALineInFractionsCountsAtEveryFrameSize) {
  PersonTracks tracks({}, {}, {}, {gate()});
  std::vector<ZoneEvent> events;
  std::size_t counted = 0;
  auto walk = [&](double start, int width, int height) {
    for (int i = 0; i <= 20; ++i) {
      const float x = 0.30F + 0.02F * static_cast<float>(i);
      tracks.update(start + 0.2 * i, width, height, {feetAt(x, 0.9F, width, height)}, events);
      counted += tracks.crossings().size();
      if (!tracks.crossings().empty()) {
        EXPECT_NEAR(tracks.crossings()[0].box.x + tracks.crossings()[0].box.width / 2, 0.52 * width,
                    2)
            << width << "x" << height << ": past the 8 px band on the first frame right of x = 0.5";
      }
    }
  };
  walk(0, 640, 360);
  EXPECT_EQ(counted, 1U) << "at 640x360";
  walk(100, 1920, 1080);
  EXPECT_EQ(counted, 2U) << "at 1920x1080";
}

// A track started after the tracker's first frame is reported from its second frame on; the step
// from its first detection (its start) to the second is a step like any other, so a walker who
// crossed the line between them is counted. At 5 detections a second a walker moves some 40 px
// a step: a track started just before a line lost its crossing before (TUD-Campus at 5/s, one of
// every three missed crossings of bench/lines.md).
TEST(PersonTracksTest, ACrossingBetweenTheFirstTwoDetectionsOfATrackIsCounted) {
  PersonTracks tracks({}, {}, {}, {gate()});
  std::vector<ZoneEvent> events;
  auto feetAtPixel = [](float x) { return Detection{Box{x - 40, 300, 80, 150}, 0.9F, 0}; };
  const Detection standing = feetAtPixel(100);
  tracks.update(0.0, kFrameW, kFrameH, {standing}, events);  // confirmed at once: first frame
  tracks.update(0.2, kFrameW, kFrameH, {standing, feetAtPixel(490)}, events);
  ASSERT_EQ(tracks.persons().size(), 1U) << "the walker's track is not confirmed yet";
  EXPECT_TRUE(tracks.crossings().empty());
  tracks.update(0.4, kFrameW, kFrameH, {standing, feetAtPixel(510)}, events);
  ASSERT_EQ(tracks.crossings().size(), 1U);
  EXPECT_EQ(tracks.crossings()[0].direction, CrossingDirection::kOut);
  EXPECT_EQ(tracks.crossings()[0].trackId, 2U);
  ASSERT_EQ(tracks.persons().size(), 2U);
  for (const TrackedPerson& p : tracks.persons()) {
    if (p.id == 1) {
      EXPECT_FALSE(p.start) << "reported from its first frame";
    }
    if (p.id != 2) continue;
    ASSERT_TRUE(p.start) << "its first detection, for a tracks file";
    EXPECT_NEAR(p.start->x + p.start->width / 2, 490, 1);
  }
  tracks.update(0.6, kFrameW, kFrameH, {standing, feetAtPixel(530)}, events);
  EXPECT_TRUE(tracks.crossings().empty());
  for (const TrackedPerson& p : tracks.persons()) EXPECT_FALSE(p.start) << p.id;
}

TEST(PersonTracksTest, LoiteringIsSaidOncePerVisit) {
  PersonTracks tracks({}, {leftHalfZone(1, 3.0)});
  std::vector<ZoneEvent> events;
  for (int i = 0; i <= 30; ++i) tracks.update(0.2 * i, kFrameW, kFrameH, {feetAt(0.2F)}, events);
  EXPECT_EQ(describeEvents(events), "enter left #1 at 0.0, loiter left #1 at 3.0");
  EXPECT_EQ(tracks.persons().at(0).zones, std::vector<std::string>{"left"});
}

TEST(PersonTracksTest, AStillPersonBecomesStationaryAndMovingEndsIt) {
  PersonTrackingSettings settings;
  settings.stationary.afterSeconds = 2;
  PersonTracks tracks(settings, {});
  std::vector<ZoneEvent> events;
  for (int i = 0; i < 10; ++i) tracks.update(0.2 * i, kFrameW, kFrameH, {feetAt(0.3F)}, events);
  EXPECT_FALSE(tracks.persons().at(0).stationary) << "1.8 s still";
  tracks.update(2.0, kFrameW, kFrameH, {feetAt(0.3F)}, events);
  EXPECT_TRUE(tracks.persons().at(0).stationary) << "2 s still";
  // Walking on at 12 px a frame: the filtered centre is more than 15 px (a tenth of the
  // person's height) from where it stood within a few frames.
  for (int i = 1; i <= 4; ++i) {
    tracks.update(2.0 + 0.2 * i, kFrameW, kFrameH, {feetAt(0.3F + 0.012F * static_cast<float>(i))},
                  events);
  }
  ASSERT_EQ(tracks.persons().size(), 1U);
  EXPECT_FALSE(tracks.persons()[0].stationary);
}

TEST(PersonTracksTest, OneMissedFrameDoesNotChangeTheCount) {
  PersonTracks tracks({}, {});
  std::vector<ZoneEvent> events;
  for (int i = 0; i < 5; ++i) tracks.update(0.2 * i, kFrameW, kFrameH, {feetAt(0.3F)}, events);
  tracks.update(1.0, kFrameW, kFrameH, {}, events);
  ASSERT_EQ(tracks.persons().size(), 1U) << "missed once: still there";
  EXPECT_FALSE(tracks.persons()[0].detected);
  tracks.update(1.2, kFrameW, kFrameH, {feetAt(0.3F)}, events);
  ASSERT_EQ(tracks.persons().size(), 1U);
  EXPECT_EQ(tracks.persons()[0].id, 1U);
  EXPECT_TRUE(tracks.persons()[0].detected);
}

TEST(PersonTracksTest, ATrackCountsAsAPersonOnlyOnceScoredAtMinScore) {
  PersonTrackingSettings settings;
  settings.minScore = 0.8F;
  PersonTracks tracks(settings, {});
  std::vector<ZoneEvent> events;
  tracks.update(0.0, kFrameW, kFrameH, {feetAt(0.3F, 0.7F)}, events);
  tracks.update(0.2, kFrameW, kFrameH, {feetAt(0.3F, 0.7F)}, events);
  EXPECT_TRUE(tracks.persons().empty()) << "tracked, but never scored as a person";
  tracks.update(0.4, kFrameW, kFrameH, {feetAt(0.3F, 0.85F)}, events);
  EXPECT_EQ(tracks.persons().size(), 1U);
  tracks.update(0.6, kFrameW, kFrameH, {feetAt(0.3F, 0.7F)}, events);
  EXPECT_EQ(tracks.persons().size(), 1U) << "once a person, its lower scores keep it";
}

TEST(PersonTracksTest, TheConfirmationIsTheMedianOfTheRecentScoresPaddedToThree) {
  const std::vector<float> one{0.9F};
  EXPECT_FALSE(confirmedByScores(one, 0.5F)) << "[0, 0, 0.9]: one detection is never enough";
  const std::vector<float> two{0.9F, 0.6F};
  EXPECT_TRUE(confirmedByScores(two, 0.6F)) << "[0, 0.6, 0.9]: the lower of two";
  EXPECT_FALSE(confirmedByScores(two, 0.61F));
  const std::vector<float> four{0.2F, 0.9F, 0.7F, 0.3F};
  EXPECT_TRUE(confirmedByScores(four, 0.5F)) << "the mean of the middle two, 0.3 and 0.7";
  EXPECT_FALSE(confirmedByScores(four, 0.51F));
  std::vector<float> many(12, 0.9F);
  many[0] = many[1] = many[2] = many[3] = many[4] = many[5] = 0.1F;
  EXPECT_TRUE(confirmedByScores(many, 0.9F)) << "only the newest 10 count: 4 low, 6 high";
  many[6] = 0.1F;
  EXPECT_FALSE(confirmedByScores(many, 0.9F)) << "5 low, 5 high: the middle two are 0.1, 0.9";
}

TEST(PersonTracksTest, WithAConfirmScoreAFlickerIsNeverAPersonAndASteadyDetectionIs) {
  PersonTrackingSettings settings;
  settings.minScore = 0.5F;
  settings.tracker.newTrackScore = 0.5F;  // as personTrackingSettings makes it
  settings.confirmScore = 0.6F;
  PersonTracks tracks(settings, {});
  std::vector<ZoneEvent> events;
  // The same place, scores 0.55, 0.62, 0.3, 0.35: tracked by ByteTrack but its median stays
  // under 0.6 (0.55, then 0.45 at its 4th frame): no person. Without confirmation (0) the first
  // score at min_score makes it one.
  const float flicker[] = {0.55F, 0.62F, 0.3F, 0.35F};
  for (int i = 0; i < 4; ++i) {
    tracks.update(0.2 * i, kFrameW, kFrameH, {feetAt(0.3F, flicker[i])}, events);
    EXPECT_TRUE(tracks.persons().empty()) << "frame " << i;
  }
  // Another track scored 0.7 twice: a person on its second detection (median of 0, 0.7, 0.7).
  PersonTracks steady(settings, {});
  steady.update(0.0, kFrameW, kFrameH, {feetAt(0.6F, 0.7F)}, events);
  EXPECT_TRUE(steady.persons().empty());
  steady.update(0.2, kFrameW, kFrameH, {feetAt(0.6F, 0.7F)}, events);
  ASSERT_EQ(steady.persons().size(), 1U);
  steady.update(0.4, kFrameW, kFrameH, {feetAt(0.6F, 0.2F)}, events);
  EXPECT_EQ(steady.persons().size(), 1U) << "once confirmed, a low score keeps it";
  settings.confirmScore = 0;
  PersonTracks today(settings, {});
  for (int i = 0; i < 2; ++i) {
    today.update(0.2 * i, kFrameW, kFrameH, {feetAt(0.3F, flicker[i])}, events);
  }
  EXPECT_EQ(today.persons().size(), 1U) << "off: a person at its first score at min_score";
}

TEST(PersonTracksTest, ATrackThatEndsLeavesItsZones) {
  PersonTrackingSettings settings;
  settings.tracker.lostAfterSeconds = 1.0;
  PersonTracks tracks(settings, {leftHalfZone(1)});
  std::vector<ZoneEvent> events;
  tracks.update(0.0, kFrameW, kFrameH, {feetAt(0.2F)}, events);
  tracks.update(0.2, kFrameW, kFrameH, {feetAt(0.2F)}, events);
  tracks.update(0.4, kFrameW, kFrameH, {}, events);
  tracks.update(1.6, kFrameW, kFrameH, {}, events);
  EXPECT_EQ(describeEvents(events), "enter left #1 at 0.0, leave left #1 at 1.6");
  EXPECT_TRUE(tracks.persons().empty());
}

TEST(PersonTracksTest, EndedTracksTellTheirDurationAndExpiryNeedsNoFrame) {
  PersonTrackingSettings settings;
  settings.tracker.lostAfterSeconds = 1.0;
  PersonTracks tracks(settings, {leftHalfZone(1)});
  std::vector<ZoneEvent> events;
  for (int i = 0; i <= 5; ++i) tracks.update(0.2 * i, kFrameW, kFrameH, {feetAt(0.2F)}, events);
  EXPECT_EQ(tracks.personsStarted(), 1U);
  tracks.expire(1.5, events);
  EXPECT_EQ(tracks.persons().size(), 1U) << "lost for 0.5 s: still counted";
  EXPECT_TRUE(tracks.endedDurations().empty());
  tracks.expire(2.5, events);
  EXPECT_TRUE(tracks.persons().empty());
  EXPECT_EQ(tracks.endedDurations(), std::vector<double>{1.0}) << "seen from 0.0 to 1.0";
  EXPECT_EQ(describeEvents(events), "enter left #1 at 0.0, leave left #1 at 2.5");
  EXPECT_DOUBLE_EQ(events.back().secondsInside, 2.5);
}

TEST(PersonTracksTest, EndAllLeavesEveryZoneNow) {
  PersonTracks tracks({}, {leftHalfZone(1)});
  std::vector<ZoneEvent> events;
  tracks.update(0.0, kFrameW, kFrameH, {feetAt(0.2F), feetAt(0.8F)}, events);
  tracks.update(0.2, kFrameW, kFrameH, {feetAt(0.2F), feetAt(0.8F)}, events);
  tracks.endAll(0.3, events);
  EXPECT_EQ(describeEvents(events), "enter left #1 at 0.0, leave left #1 at 0.3")
      << "only the track in the zone leaves it";
  EXPECT_EQ(tracks.endedDurations().size(), 2U) << "both tracks ended";
  EXPECT_TRUE(tracks.persons().empty());
}

TEST(PersonTracksTest, APersonStandingInAMaskIsNotTracked) {
  PersonTracks tracks({}, {leftHalfZone(1)}, {{{0, 0}, {0.25F, 0}, {0.25F, 1}, {0, 1}}});
  std::vector<ZoneEvent> events;
  for (int i = 0; i < 3; ++i) {
    tracks.update(0.2 * i, kFrameW, kFrameH, {feetAt(0.1F), feetAt(0.4F)}, events);
  }
  ASSERT_EQ(tracks.persons().size(), 1U) << "the one at x 0.1 stands in the mask";
  const Box& box = tracks.persons()[0].box;
  EXPECT_NEAR((box.x + box.width / 2) / kFrameW, 0.4F, 0.01F)
      << "the person left is the one at x 0.4, outside the mask";
  EXPECT_EQ(describeEvents(events), "enter left #1 at 0.0");
}

TEST(PersonTracksTest, ANewTrackStartsAtTheDaemonsMinScore) {
  TrackingSettings camera;
  camera.lostAfter = std::chrono::milliseconds(3000);
  PresenceSettings presence;
  presence.minScore = 0.5F;
  const PersonTrackingSettings s = personTrackingSettings(camera, presence);
  EXPECT_FLOAT_EQ(s.tracker.newTrackScore, 0.5F) << "a person at 0.55 counts, so it is tracked";
  EXPECT_DOUBLE_EQ(s.tracker.lostAfterSeconds, 3.0);
  EXPECT_FLOAT_EQ(s.confirmScore, 0.0F);
  presence.confirmScore = 0.65F;
  EXPECT_FLOAT_EQ(personTrackingSettings(camera, presence).confirmScore, 0.65F);
  presence.minScore = 0.8F;
  EXPECT_FLOAT_EQ(personTrackingSettings(camera, presence).tracker.newTrackScore, 0.6F);
  PersonTracks tracks(s, {});
  std::vector<ZoneEvent> events;
  tracks.update(0.0, kFrameW, kFrameH, {feetAt(0.3F, 0.55F)}, events);
  tracks.update(0.2, kFrameW, kFrameH, {feetAt(0.3F, 0.55F)}, events);
  EXPECT_EQ(tracks.persons().size(), 1U);
}

}  // namespace
}  // namespace vigil
