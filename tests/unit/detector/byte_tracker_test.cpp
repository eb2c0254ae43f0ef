#include "detector/track/byte_tracker.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace vigil {
namespace {

Detection person(float x, float y, float score = 0.9F) {
  return Detection{Box{x, y, 40, 100}, score, 0};
}

// The ids of the tracks a frame reports (confirmed and detected on it).
std::set<std::uint64_t> reported(const std::vector<Track>& tracks) {
  std::set<std::uint64_t> ids;
  for (const Track& t : tracks) {
    if (t.confirmed && t.matched) ids.insert(t.id);
  }
  return ids;
}

TEST(BoxKalmanTest, PredictsByTimeNotByFrames) {
  // A box walking 30 px per second to the right, seen five times a second.
  BoxKalman filter(Box{100, 50, 40, 100});
  for (int i = 1; i <= 20; ++i) {
    filter.predict(0.2);
    filter.update(Box{100 + 6.0F * static_cast<float>(i), 50, 40, 100});
  }
  EXPECT_NEAR(filter.box().x, 220, 1.5);
  filter.predict(1.0);
  EXPECT_NEAR(filter.box().x, 250, 3) << "one second ahead: 30 px further";
  EXPECT_NEAR(filter.box().y, 50, 1);
  EXPECT_NEAR(filter.box().height, 100, 1);
  EXPECT_NEAR(filter.box().width, 40, 1);
}

TEST(BoxKalmanTest, AStillBoxStaysWhereItIs) {
  BoxKalman filter(Box{10, 20, 30, 90});
  for (int i = 0; i < 5; ++i) {
    filter.predict(0.2);
    filter.update(Box{10, 20, 30, 90});
  }
  filter.predict(30.0);
  EXPECT_NEAR(filter.box().x, 10, 0.5);
  EXPECT_NEAR(filter.box().y, 20, 0.5);
}

// Which walker a track is on: the one whose detection on this frame its box is nearest to.
std::size_t nearestDetection(const Track& track, const std::vector<Detection>& detections) {
  auto distance = [&](const Detection& d) {
    const float dx = track.box.x - d.box.x;
    const float dy = track.box.y - d.box.y;
    return dx * dx + dy * dy;
  };
  std::size_t best = 0;
  for (std::size_t i = 1; i < detections.size(); ++i) {
    if (distance(detections[i]) < distance(detections[best])) best = i;
  }
  return best;
}

// What a track says of its start: the tracks of the first frame are confirmed at once; a later
// one is confirmed on its second frame, which reportedFirstOnItsSecondFrame tells, with the
// detection it was started from.
TEST(ByteTrackerTest, ATrackStartedLaterTellsItsStartWhenConfirmed) {
  for (int kind = 0; kind < 2; ++kind) {
    SCOPED_TRACE(kind == 0 ? "bytetrack" : "iou");
    ByteTracker byteTracker;
    IouTracker iouTracker;
    auto update = [&](double time, const std::vector<Detection>& detections) {
      return kind == 0 ? byteTracker.update(time, detections) : iouTracker.update(time, detections);
    };
    auto find = [](const std::vector<Track>& tracks, std::uint64_t id) {
      for (const Track& t : tracks) {
        if (t.id == id) return t;
      }
      ADD_FAILURE() << "no track " << id;
      return Track{};
    };
    const Detection standing = person(100, 100);
    std::vector<Track> tracks = update(0.0, {standing});
    EXPECT_TRUE(find(tracks, 1).confirmedAtStart);
    tracks = update(0.2, {standing, person(400, 100)});
    EXPECT_FALSE(find(tracks, 2).confirmed);
    EXPECT_FALSE(reportedFirstOnItsSecondFrame(find(tracks, 1))) << "reported from the start";
    tracks = update(0.4, {standing, person(410, 100)});
    const Track walker = find(tracks, 2);
    EXPECT_TRUE(reportedFirstOnItsSecondFrame(walker));
    EXPECT_FLOAT_EQ(walker.startBox.x, 400);
    EXPECT_FALSE(reportedFirstOnItsSecondFrame(find(tracks, 1)));
    tracks = update(0.6, {standing, person(420, 100)});
    EXPECT_FALSE(reportedFirstOnItsSecondFrame(find(tracks, 2))) << "only on its second frame";
  }
}

TEST(ByteTrackerTest, TwoWalkersKeepTheirIdsAtFiveDetectionsPerSecond) {
  // Walker 0 goes right from x 100 at y 50, walker 1 left from x 500 at y 60: they cross at
  // frame 25 (x 300), where their boxes overlap almost entirely.
  ByteTracker tracker;
  for (int i = 0; i < 40; ++i) {
    const float step = 8.0F * static_cast<float>(i);
    const std::vector<Detection> walkers{person(100 + step, 50), person(500 - step, 60)};
    const auto& tracks = tracker.update(0.2 * i, walkers);
    std::map<std::size_t, std::uint64_t> idOf;  // walker -> the id reported on it
    for (const Track& t : tracks) {
      if (t.confirmed && t.matched) idOf[nearestDetection(t, walkers)] = t.id;
    }
    EXPECT_EQ(idOf, (std::map<std::size_t, std::uint64_t>{{0, 1}, {1, 2}}))
        << "frame " << i << ": walker 0 is #1 and walker 1 is #2 before, at and after the crossing";
  }
  EXPECT_EQ(tracker.tracksStarted(), 2U);
}

TEST(ByteTrackerTest, ALowScoreDetectionKeepsATrackedPersonTracked) {
  ByteTracker tracker;
  tracker.update(0.0, {person(100, 50)});
  tracker.update(0.2, {person(104, 50)});
  auto& tracks = tracker.update(0.4, {person(108, 50, 0.3F)});  // partly hidden
  EXPECT_EQ(reported(tracks), (std::set<std::uint64_t>{1}));
  EXPECT_FLOAT_EQ(tracks.at(0).score, 0.3F);
  // A low score never starts a track of its own.
  auto& after = tracker.update(0.6, {person(112, 50), person(400, 50, 0.3F)});
  EXPECT_EQ(after.size(), 1U);
}

// The daemon starts tracks at presence's min_score (0.5), under ByteTrack's det_thresh (0.6).
ByteTrackSettings startingAtHalf() {
  ByteTrackSettings settings;
  settings.newTrackScore = 0.5F;
  return settings;
}

TEST(ByteTrackerTest, AWeakTrackLivesOnHighScoresOnlyUntilItIsEstablished) {
  // A tree scored 0.5 to 0.58 on some frames and 0.4 on others, where nobody walks: tracked
  // while it scores 0.5 (presence's min_score), not carried on by the scores under it.
  ByteTracker tracker(startingAtHalf());
  tracker.update(0.0, {});
  tracker.update(0.2, {person(100, 50, 0.52F)});
  auto& weak = tracker.update(0.4, {person(100, 50, 0.55F)});
  EXPECT_EQ(reported(weak), (std::set<std::uint64_t>{1})) << "a person at min_score counts";
  EXPECT_FALSE(weak.at(0).established);
  EXPECT_TRUE(reported(tracker.update(0.6, {person(100, 50, 0.4F)})).empty())
      << "never seen at 0.6: a 0.4 does not carry it";
  EXPECT_EQ(reported(tracker.update(0.8, {person(100, 50, 0.56F)})), (std::set<std::uint64_t>{1}))
      << "the same track again at 0.56";
  // Once seen at 0.6, it is a person as ByteTrack starts them: low scores carry it.
  tracker.update(1.0, {person(100, 50, 0.7F)});
  auto& established = tracker.update(1.2, {person(100, 50, 0.3F)});
  EXPECT_EQ(reported(established), (std::set<std::uint64_t>{1}));
  EXPECT_TRUE(established.at(0).established);
  EXPECT_EQ(tracker.tracksStarted(), 1U);
}

TEST(ByteTrackerTest, ALostTrackComesBackWithinItsTimeAndNotAfter) {
  ByteTrackSettings settings;
  settings.lostAfterSeconds = 1.0;
  ByteTracker tracker(settings);
  tracker.update(0.0, {person(100, 50)});
  tracker.update(0.2, {person(100, 50)});
  EXPECT_EQ(reported(tracker.update(0.4, {})), (std::set<std::uint64_t>{}));
  EXPECT_EQ(tracker.tracks().size(), 1U) << "lost, kept";
  EXPECT_EQ(reported(tracker.update(1.1, {person(100, 50)})), (std::set<std::uint64_t>{1}))
      << "0.9 s after it was last seen: the same person";
  tracker.update(2.5, {});
  EXPECT_TRUE(tracker.tracks().empty()) << "1.4 s unseen: gone";
  tracker.update(2.7, {person(100, 50)});
  auto& back = tracker.update(2.9, {person(100, 50)});
  EXPECT_EQ(reported(back), (std::set<std::uint64_t>{2})) << "a new id after expiry";
}

TEST(ByteTrackerTest, ALostTracksBoxKeepsItsHeight) {
  // A person coming closer: 100, 110, 120, 130 px tall, then unseen.
  ByteTracker tracker;
  for (int i = 0; i < 4; ++i) {
    const float h = 100.0F + 10.0F * static_cast<float>(i);
    tracker.update(0.2 * i, {Detection{Box{100, 50, 0.4F * h, h}, 0.9F, 0}});
  }
  const float seen = tracker.tracks().at(0).box.height;
  EXPECT_GT(seen, 125.0F);
  const auto& lost = tracker.update(0.8, {});
  EXPECT_GT(lost.at(0).box.height, seen) << "the first frame unseen goes on at the last rate";
  const float firstLost = lost.at(0).box.height;
  EXPECT_FLOAT_EQ(tracker.update(1.0, {}).at(0).box.height, firstLost) << "then it is held";
  EXPECT_FLOAT_EQ(tracker.update(1.4, {}).at(0).box.height, firstLost);
}

// A person standing still (150 px tall) is hidden by a walker passing in front of them, nearer
// the camera (220 px tall, feet lower); when the walker's own track is lost too, the walker's next
// box overlaps the lost track of the person behind enough to take it by overlap alone.
std::vector<std::uint64_t> idsOfABoxAfterALoss(float height, float lostHeightRatio) {
  ByteTrackSettings settings;
  settings.lostHeightRatio = lostHeightRatio;
  ByteTracker tracker(settings);
  const Box standing{300, 100, 60, 150};
  tracker.update(0.0, {Detection{standing, 0.9F, 0}});
  tracker.update(0.2, {Detection{standing, 0.9F, 0}});
  tracker.update(0.4, {});  // hidden
  std::vector<std::uint64_t> ids;
  for (const Track& t : tracker.update(0.6, {Detection{Box{295, 95, 80, height}, 0.9F, 0}})) {
    if (t.matched) ids.push_back(t.id);
  }
  return ids;
}

TEST(ByteTrackerTest, ALostTrackIsFoundAgainOnlyByABoxOfAboutItsHeight) {
  EXPECT_EQ(idsOfABoxAfterALoss(160, 1.2F), (std::vector<std::uint64_t>{1}))
      << "160 px where a 150 px person was lost: the same person";
  EXPECT_EQ(idsOfABoxAfterALoss(220, 1.2F), (std::vector<std::uint64_t>{2}))
      << "220 px: someone else, a new track";
  EXPECT_EQ(idsOfABoxAfterALoss(220, 0), (std::vector<std::uint64_t>{1}))
      << "without the height check the overlap alone hands the lost track to the walker";
}

TEST(ByteTrackerTest, ANewTrackIsConfirmedOnItsSecondFrameAndAOneOffIsDropped) {
  ByteTracker tracker;
  tracker.update(0.0, {});
  auto& first = tracker.update(0.2, {person(100, 50)});
  ASSERT_EQ(first.size(), 1U);
  EXPECT_FALSE(first[0].confirmed) << "seen once, after the first frame";
  EXPECT_TRUE(reported(first).empty());
  EXPECT_EQ(reported(tracker.update(0.4, {person(102, 50)})), (std::set<std::uint64_t>{1}));
  tracker.update(0.6, {person(104, 50), person(400, 300)});  // a one-off false positive
  auto& next = tracker.update(0.8, {person(106, 50)});
  EXPECT_EQ(next.size(), 1U) << "the one-off was dropped, not kept as lost";
  EXPECT_EQ(reported(next), (std::set<std::uint64_t>{1}));
}

TEST(ByteTrackerTest, AWalkerMovingMostOfTheirWidthBetweenDetectionsKeepsOneTrack) {
  // 40 px wide, 24 px a step at 5 detections a second (a brisk walker, or a small one far away),
  // appearing after the tracker's first frame: the track started on them has no velocity yet,
  // and its box overlaps their next one by IoU 0.25, under the 0.3 a track seen once needs.
  for (const float buffer : {0.2F, 0.0F}) {
    SCOPED_TRACE(buffer);
    ByteTrackSettings settings;
    settings.bufferScale = buffer;
    ByteTracker tracker(settings);
    tracker.update(0.0, {});
    std::set<std::uint64_t> ids;
    for (int i = 1; i <= 10; ++i) {
      const auto& tracks = tracker.update(0.2 * i, {person(100 + 24.0F * i, 50)});
      const std::set<std::uint64_t> now = reported(tracks);
      ids.insert(now.begin(), now.end());
    }
    if (buffer > 0) {
      EXPECT_EQ(ids, (std::set<std::uint64_t>{1})) << "one person, one track";
      EXPECT_EQ(tracker.tracksStarted(), 1U);
    } else {
      EXPECT_TRUE(ids.empty()) << "without the buffer: a new track every frame, none confirmed";
      EXPECT_EQ(tracker.tracksStarted(), 10U);
    }
  }
}

TEST(ByteTrackerTest, TheBufferedMatchTakesOnlyWhatTheOtherAssociationsLeft) {
  ByteTracker tracker;
  tracker.update(0.0, {person(100, 50)});
  tracker.update(0.2, {person(100, 50)});
  // The person partly hidden (a low score, right where the track is) and someone else 30 px to
  // the side: near enough for the buffered IoU, too far for the plain one.
  const auto& tracks = tracker.update(0.4, {person(102, 50, 0.3F), person(130, 50)});
  ASSERT_EQ(tracks.size(), 2U);
  EXPECT_EQ(tracks[0].id, 1U);
  EXPECT_NEAR(tracks[0].box.x, 102, 2) << "the track took its own low-score box, and only it";
  EXPECT_FLOAT_EQ(tracks[0].score, 0.3F);
  EXPECT_EQ(tracks[1].id, 2U) << "the other person starts a track of their own";
  EXPECT_FLOAT_EQ(tracks[1].startBox.x, 130);
}

TEST(IouTrackerTest, MatchesByOverlapAndEndsUnseenTracks) {
  IouTracker tracker(0.5F, 0.3F, 1.0);
  tracker.update(0.0, {person(100, 50)});
  EXPECT_EQ(reported(tracker.update(0.2, {person(110, 50)})), (std::set<std::uint64_t>{1}));
  EXPECT_TRUE(reported(tracker.update(0.4, {person(120, 50, 0.3F)})).empty())
      << "below its minimum score";
  EXPECT_EQ(reported(tracker.update(0.6, {person(125, 50)})), (std::set<std::uint64_t>{1}));
  tracker.update(2.0, {});
  tracker.update(2.2, {person(125, 50)});
  EXPECT_EQ(reported(tracker.update(2.4, {person(125, 50)})), (std::set<std::uint64_t>{2}));
}

}  // namespace
}  // namespace vigil
