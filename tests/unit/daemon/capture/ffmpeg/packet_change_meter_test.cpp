// The change meter on made-up packet sizes; on a real clip's packets through FfmpegReader in
// captured_picture_test.cpp.
#include "daemon/capture/ffmpeg/packet_change_meter.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

// 30 packets a second: a P-frame of `p` bytes, then two B-frames of a tenth of it, as a
// camera's stream in decode order; the time of the first packet that says "changed", or -1.
struct Feed {
  PacketChangeMeter meter;
  double seconds = 0;
  double feed(double duration, std::int64_t p) {
    double first = -1;
    for (const double end = seconds + duration; seconds < end; seconds += 1.0 / 30) {
      const auto n = static_cast<int>(seconds * 30 + 0.5);
      const std::int64_t bytes = n % 3 == 0 ? p : p / 10;
      if (meter.changed(seconds, bytes) && first < 0) first = seconds;
    }
    return first;
  }
};

TEST(PacketChangeMeterTest, AStillSceneIsNoChangeAndSixTimesItsBytesIs) {
  Feed still;
  EXPECT_EQ(still.feed(10, 500), -1) << "the same bytes for 10 s";
  const double start = still.seconds;
  const double changed = still.feed(2, 3000);  // six times the bytes
  ASSERT_GE(changed, start);
  EXPECT_LT(changed - start, PacketChangeMeter::kWindowSeconds) << "within a window";
}

TEST(PacketChangeMeterTest, NoiseWithinTheRatioIsNoChange) {
  Feed noisy;
  EXPECT_EQ(noisy.feed(1, 500), -1);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(noisy.feed(0.5, i % 2 == 0 ? 300 : 1200), -1) << "half a second at " << i;
  }
}

TEST(PacketChangeMeterTest, TheFirstWindowOnlySetsTheUsualAmount) {
  Feed feed;
  EXPECT_EQ(feed.feed(0.4, 5000), -1) << "nothing to compare with yet";
  EXPECT_EQ(feed.feed(2, 5000), -1);
}

// Somebody walking in just as the camera goes idle again: the new stretch's first window is not
// full, and the usual amount of the last stretch tells the change.
TEST(PacketChangeMeterTest, ANewStillStretchKeepsTheUsualAmountOfTheLast) {
  Feed feed;
  EXPECT_EQ(feed.feed(3, 500), -1);
  feed.meter.startStretch();
  feed.seconds += 20;  // the camera was active meanwhile
  EXPECT_GE(feed.feed(0.4, 3000), 0) << "six times the bytes, within the first window";
}

// A light switched on: a lasting new level is a change at first, then the usual.
TEST(PacketChangeMeterTest, ALastingNewLevelBecomesTheUsual) {
  Feed feed;
  EXPECT_EQ(feed.feed(3, 500), -1);
  EXPECT_GE(feed.feed(1, 3000), 0) << "six times the bytes";
  feed.feed(60, 3000);
  EXPECT_EQ(feed.feed(10, 3000), -1) << "after a minute of it";
}

TEST(PacketChangeMeterTest, ALoopedFileStartsAStretchAgain) {
  Feed feed;
  EXPECT_EQ(feed.feed(3, 500), -1);
  feed.seconds = 0;  // the file looped: its time starts again
  EXPECT_EQ(feed.feed(3, 500), -1);
  EXPECT_GE(feed.feed(1, 3000), 0);
}

}  // namespace
}  // namespace vigil
