// The rate a camera's frames really come at, said once after a few seconds of them, against
// the rate its source declared.
#include "daemon/capture/camera/frame_rate_probe.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

using std::chrono::milliseconds;

TEST(FrameRateProbeTest, TheRateIsSaidOnceAfterTheWindowFromTheFramesThatCame) {
  FrameRateProbe probe;
  const SteadyClock::time_point start{};
  std::optional<double> said;
  int saidAt = -1;
  // An MJPEG camera sending 10 pictures a second, for 8 seconds.
  for (int i = 0; i <= 80; ++i) {
    if (auto fps = probe.frameAt(start + milliseconds(100 * i))) {
      EXPECT_FALSE(said.has_value()) << "said twice, again at frame " << i;
      said = fps;
      saidAt = i;
    }
  }
  ASSERT_TRUE(said.has_value());
  EXPECT_EQ(saidAt, 50) << "the first frame 5 s after the first";
  EXPECT_NEAR(*said, 10.0, 1e-9);
}

TEST(FrameRateProbeTest, ASlowCameraIsMeasuredByItsIntervals) {
  FrameRateProbe probe;
  const SteadyClock::time_point start{};
  EXPECT_FALSE(probe.frameAt(start));
  EXPECT_FALSE(probe.frameAt(start + std::chrono::seconds(4)));
  auto fps = probe.frameAt(start + std::chrono::seconds(8));
  ASSERT_TRUE(fps.has_value());
  EXPECT_NEAR(*fps, 0.25, 1e-9);
}

TEST(FrameRateProbeTest, TheDeclaredRateIsNamedOnlyWhenItIsOffByMoreThanATenth) {
  EXPECT_EQ(FrameRateProbe::describe(9.99, 25),
            "measured 10.0 fps, not the 25.0 the source declared");
  EXPECT_EQ(FrameRateProbe::describe(29.7, 30), "measured 29.7 fps");
  EXPECT_EQ(FrameRateProbe::describe(27.4, 25), "measured 27.4 fps") << "within a tenth";
  EXPECT_EQ(FrameRateProbe::describe(12, 0), "measured 12.0 fps (the source declared none)");
}

}  // namespace
}  // namespace vigil
