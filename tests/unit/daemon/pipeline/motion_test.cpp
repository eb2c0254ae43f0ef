// The motion detector and gate on real frames of the one-by-one clip (768x432, 10 fps): frames
// 0-57 show the empty room, a person walks in from the bottom left at frames 58-85 (x 0.26 to
// 0.69 of the width) and then stands still until about frame 178.
#include "daemon/pipeline/motion.h"

#include <gtest/gtest.h>

#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>

#include "tests/model_paths.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;

constexpr int kFirstMotion = 58;  // the first frame that differs from the empty room
constexpr int kStandsStill = 90;  // from here the person does not move
constexpr int kFramesNeeded = 176;
constexpr auto kFramePeriod = 100ms;  // the clip's 10 fps

const std::vector<cv::Mat>& clipFrames() {
  static const std::vector<cv::Mat> frames = [] {
    std::vector<cv::Mat> out;
    cv::VideoCapture capture((testing::videosDir() / "one-by-one-person-detection.mp4").string(),
                             cv::CAP_FFMPEG);
    cv::Mat frame;
    while (static_cast<int>(out.size()) < kFramesNeeded && capture.read(frame)) {
      out.push_back(frame.clone());
    }
    return out;
  }();
  return frames;
}

#define VIGIL_REQUIRE_CLIP()                                                         \
  do {                                                                               \
    if (clipFrames().size() < static_cast<std::size_t>(kFramesNeeded))               \
      GTEST_SKIP() << "one-by-one clip absent or short in " << testing::videosDir(); \
  } while (0)

// Runs the detector over frames [from, to) every `step` frames, as at 10 / step fps.
std::vector<MotionDetector::Result> run(MotionDetector& detector, int from, int to, int step) {
  std::vector<MotionDetector::Result> results;
  for (int i = from; i < to; i += step) {
    auto r = detector.update(clipFrames()[static_cast<std::size_t>(i)], kFramePeriod * step);
    EXPECT_TRUE(r.has_value()) << "frame " << i;
    results.push_back(r.value_or(MotionDetector::Result{}));
  }
  return results;
}

TEST(MotionDetectorTest, StillEmptySceneIsNoMotion) {
  VIGIL_REQUIRE_CLIP();
  MotionDetector detector(25, 0.005F, {});
  auto results = run(detector, 0, kFirstMotion, 2);
  for (std::size_t i = 0; i < results.size(); ++i) {
    EXPECT_FALSE(results[i].motion) << "frame " << 2 * i;
    EXPECT_LT(results[i].changedFraction, 0.001) << "frame " << 2 * i;
  }
}

TEST(MotionDetectorTest, PersonWalkingInIsMotionAtOnce) {
  VIGIL_REQUIRE_CLIP();
  MotionDetector detector(25, 0.005F, {});
  auto results = run(detector, 0, kStandsStill, 2);
  int first = -1;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (results[i].motion && first < 0) first = static_cast<int>(2 * i);
  }
  EXPECT_GE(first, kFirstMotion) << "motion in the empty room";
  EXPECT_LE(first, kFirstMotion + 4) << "motion seen late (frame " << first << ")";
  // While walking in, most of the analysed frames are motion.
  int moving = 0;
  for (int i = 62; i < 84; i += 2) moving += results[static_cast<std::size_t>(i / 2)].motion;
  EXPECT_GE(moving, 9) << "of 11 frames while walking in";
}

TEST(MotionDetectorTest, MaskedRegionIsIgnored) {
  VIGIL_REQUIRE_CLIP();
  // Where the person walks: x 0.26 to 0.69, the whole height.
  MotionDetector masked(25, 0.005F, {Polygon{{0.2F, 0}, {0.8F, 0}, {0.8F, 1}, {0.2F, 1}}});
  for (const auto& r : run(masked, 0, kStandsStill, 2)) EXPECT_FALSE(r.motion);
  // A mask elsewhere changes nothing.
  MotionDetector elsewhere(25, 0.005F, {Polygon{{0.85F, 0}, {1, 0}, {1, 1}, {0.85F, 1}}});
  bool seen = false;
  for (const auto& r : run(elsewhere, 0, kStandsStill, 2)) seen = seen || r.motion;
  EXPECT_TRUE(seen);
}

TEST(MotionDetectorTest, PersonStandingStillFadesIntoTheBackground) {
  VIGIL_REQUIRE_CLIP();
  MotionDetector detector(25, 0.005F, {});
  auto results = run(detector, 0, kFramesNeeded, 2);
  // About 3 background time constants after the person stopped, nothing moves any more.
  const int settled = kStandsStill + static_cast<int>(3 * MotionDetector::kBackgroundSeconds * 10);
  for (int i = settled; i < kFramesNeeded; i += 2) {
    EXPECT_FALSE(results[static_cast<std::size_t>(i / 2)].motion) << "frame " << i;
  }
}

TEST(MotionDetectorTest, UnusableFrameIsNotAnalysed) {
  MotionDetector detector(25, 0.005F, {});
  EXPECT_FALSE(detector.update(cv::Mat(), 100ms).has_value());
  EXPECT_FALSE(detector.update(cv::Mat(10, 10, CV_8UC2), 100ms).has_value());
  EXPECT_FALSE(detector.update(cv::Mat(10, 10, CV_16UC3), 100ms).has_value());
}

// A clip frame as a source that delivers BGR pixels hands it over.
CapturedPicture pictureOf(const cv::Mat& bgr) {
  CapturedPicture picture;
  bgr.copyTo(picture.bgrForWriting(bgr.size()));
  return picture;
}

// Feeds the gate every frame of [from, to) at the clip's rate on a replayed clock.
struct GateRun {
  int offered = 0;
  int gated = 0;
  int analysed = 0;
  std::vector<int> offeredFrames;
};

GateRun feed(MotionGate& gate, int from, int to, MotionGate::Person person,
             MotionGate::Clock::time_point& now) {
  GateRun run;
  for (int i = from; i < to; ++i) {
    auto d = gate.admit(pictureOf(clipFrames()[static_cast<std::size_t>(i)]), now, person);
    run.offered += d.offer;
    run.gated += d.gated;
    run.analysed += d.analysed;
    if (d.offer) run.offeredFrames.push_back(i);
    EXPECT_FALSE(d.offer && d.gated);
    now += kFramePeriod;
  }
  return run;
}

MotionSettings gating() {
  MotionSettings s;
  s.enabled = true;
  s.idleAfter = 2s;
  s.idleDetectInterval = 1s;
  return s;
}

TEST(MotionGateTest, EmptyStillSceneIsGatedAndMotionRestoresTheFullRateAtOnce) {
  VIGIL_REQUIRE_CLIP();
  MotionGate gate(gating(), {}, 200ms);  // detect_fps 5 on a 10 fps clip
  MotionGate::Clock::time_point now{};
  // The first 2 s (idle_after): full rate, every frame offered to the scheduler.
  auto start = feed(gate, 0, 20, MotionGate::Person::kNone, now);
  EXPECT_EQ(start.offered, 20);
  EXPECT_EQ(start.gated, 0);
  EXPECT_EQ(start.analysed, 10) << "analysed once per detect period";
  EXPECT_EQ(gate.state(), MotionState::kMotion);
  // Then idle: one frame a second, the other analysed frames gated.
  auto idle = feed(gate, 20, 56, MotionGate::Person::kNone, now);
  EXPECT_EQ(gate.state(), MotionState::kIdle);
  EXPECT_EQ(idle.analysed, 18);
  EXPECT_GE(idle.offered, 3);
  EXPECT_LE(idle.offered, 4);
  EXPECT_EQ(idle.offered + idle.gated, idle.analysed);
  // The person walks in: offered from the first analysed frame with motion.
  auto walk = feed(gate, 56, 70, MotionGate::Person::kNone, now);
  EXPECT_EQ(gate.state(), MotionState::kMotion);
  ASSERT_FALSE(walk.offeredFrames.empty());
  EXPECT_LE(walk.offeredFrames.front(), kFirstMotion + 4);
  EXPECT_EQ(walk.offeredFrames.back(), 69) << "full rate: every frame offered again";
}

TEST(MotionGateTest, StillPersonKeepsTheFullRateUnlessAStillIntervalIsSet) {
  VIGIL_REQUIRE_CLIP();
  for (auto still : {0ms, 1000ms}) {
    MotionSettings s = gating();
    s.stillDetectInterval = still;
    MotionGate gate(s, {}, 200ms);
    MotionGate::Clock::time_point now{};
    feed(gate, 0, 150, MotionGate::Person::kSeen, now);
    auto seen = feed(gate, 150, kFramesNeeded, MotionGate::Person::kSeen, now);
    EXPECT_EQ(gate.state(), MotionState::kPerson) << still.count();
    if (still == 0ms) {
      EXPECT_EQ(seen.gated, 0) << "the issue's rule: a present person means the full rate";
      EXPECT_EQ(seen.analysed, 0) << "motion could not lower the rate: not checked";
    } else {
      EXPECT_GT(seen.gated, 8) << "a still, seen person is checked once a second";
    }
    // The latest detection missed them while the event is open: full rate to confirm.
    auto missed = feed(gate, 150, kFramesNeeded, MotionGate::Person::kPresent, now);
    EXPECT_EQ(missed.gated, 0) << still.count();
  }
}

TEST(MotionGateTest, APersonNoLongerSeenKeepsTheFullRateForIdleAfterThenIdles) {
  VIGIL_REQUIRE_CLIP();
  MotionGate gate(gating(), {}, 200ms);
  MotionGate::Clock::time_point now{};
  feed(gate, 0, kFirstMotion, MotionGate::Person::kNone, now);
  ASSERT_EQ(gate.state(), MotionState::kIdle);
  // The detector sees her walk in and stand: every frame offered, none checked for motion.
  auto seen = feed(gate, kFirstMotion, kStandsStill + 20, MotionGate::Person::kSeen, now);
  EXPECT_EQ(seen.offered, kStandsStill + 20 - kFirstMotion);
  EXPECT_EQ(seen.analysed, 0);
  EXPECT_EQ(gate.state(), MotionState::kPerson);
  // The detector no longer sees her (she stands still): idle_after (2 s) at the full rate from
  // the last frame she was seen on, checked against a background of the scene as it is now ...
  const int unseen = kStandsStill + 20;
  auto after = feed(gate, unseen, unseen + 20, MotionGate::Person::kNone, now);
  EXPECT_EQ(after.offered, 20);
  EXPECT_EQ(after.analysed, 10);
  EXPECT_EQ(gate.state(), MotionState::kMotion);
  // ... then idle at once, as nothing moves: not motion against the empty room of before.
  feed(gate, unseen + 20, unseen + 21, MotionGate::Person::kNone, now);
  EXPECT_EQ(gate.state(), MotionState::kIdle);
  auto idle = feed(gate, unseen + 21, kFramesNeeded, MotionGate::Person::kNone, now);
  EXPECT_EQ(gate.state(), MotionState::kIdle);
  EXPECT_GT(idle.gated, 0);
}

TEST(MotionGateTest, UnusableFrameCountsAsMotion) {
  MotionGate gate(gating(), {}, 200ms);
  MotionGate::Clock::time_point now{};
  const CapturedPicture empty;
  for (int i = 0; i < 100; ++i, now += 200ms) {
    auto d = gate.admit(empty, now, MotionGate::Person::kNone);
    EXPECT_TRUE(d.offer) << i;
  }
  EXPECT_EQ(gate.state(), MotionState::kMotion);
}

}  // namespace
}  // namespace vigil

namespace vigil {
namespace {

// The clip's frame at a quarter of its size (192x108) in the middle of a dark 1080p picture: the
// person walking in is 20-60 pixels tall, a person across a yard.
cv::Mat farFrame(int index, cv::Rect& placed) {
  const cv::Mat& frame = clipFrames()[static_cast<std::size_t>(index)];
  cv::Mat far(1080, 1920, CV_8UC3, cv::Scalar(30, 30, 30));
  placed = cv::Rect(864, 486, frame.cols / 4, frame.rows / 4);
  cv::resize(frame, far(placed), placed.size(), 0, 0, cv::INTER_AREA);
  return far;
}

TEST(MotionDetectorTest, FindsWhereAFarPersonMovesThatTheWholeFrameFractionMisses) {
  VIGIL_REQUIRE_CLIP();
  MotionDetector fraction(25, 0.005F, {});
  MotionDetector boxes(25, 0.005F, {}, true);
  cv::Rect placed;
  bool fractionMoved = false;
  std::vector<Box> found;
  for (int i = 0; i < 80; i += 2) {
    const cv::Mat far = farFrame(i, placed);
    auto a = fraction.update(far, kFramePeriod * 2);
    auto b = boxes.update(far, kFramePeriod * 2);
    ASSERT_TRUE(a && b) << "frame " << i;
    fractionMoved |= a->motion;
    if (i < kFirstMotion) {
      EXPECT_FALSE(b->motion) << "frame " << i;
      EXPECT_TRUE(b->boxes.empty()) << "frame " << i;
    } else if (b->motion) {
      found = b->boxes;
    }
  }
  EXPECT_FALSE(fractionMoved) << "a far person changes under 0.5% of the picture";
  ASSERT_FALSE(found.empty()) << "the changed part is motion by itself";
  // The largest part lies on the placed clip, in pixels of the 1080p picture.
  const Box b = scaledBox(found.front(), 1920, 1080);
  EXPECT_GE(b.x, placed.x - 10);
  EXPECT_LE(b.right(), placed.br().x + 10);
  EXPECT_GE(b.y, placed.y - 10);
  EXPECT_LE(b.bottom(), placed.br().y + 10);
}

TEST(MotionGateTest, WithBoxesASeenPersonIsStillCheckedAndItsBoxesKept) {
  VIGIL_REQUIRE_CLIP();
  MotionSettings s = gating();
  MotionGate gate(s, {}, 200ms);
  gate.setFindBoxes(true);
  MotionGate::Clock::time_point now{};
  feed(gate, 0, kFirstMotion, MotionGate::Person::kNone, now);
  auto seen = feed(gate, kFirstMotion, kFirstMotion + 20, MotionGate::Person::kSeen, now);
  EXPECT_EQ(seen.gated, 0) << "a seen person keeps the full rate";
  EXPECT_EQ(seen.analysed, 10) << "and is checked once a detect period, for where things move";
  EXPECT_FALSE(gate.boxes().empty()) << "she walks in";
}

}  // namespace
}  // namespace vigil
