#include "daemon/events/camera_rates.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

using namespace std::chrono_literals;

CameraView viewOf(const std::shared_ptr<CameraChannel>& channel) {
  CameraView view;
  view.channel = channel;
  return view;
}

TEST(CameraRatesTest, RatesAreMeasuredOverWindowsOfTwoSeconds) {
  auto channel = std::make_shared<CameraChannel>("door", 5.0);
  CameraView view = viewOf(channel);
  CameraCounters& c = channel->counters();
  c.captured += 3;  // before the window: not counted
  const auto t0 = SteadyClock::now();
  CameraRates::update(view, t0);
  c.captured += 10;
  c.detected += 4;
  CameraRates::update(view, t0 + 1s);
  EXPECT_EQ(view.fpsCaptured, 0) << "the window is not over";
  CameraRates::update(view, t0 + 2s);
  EXPECT_DOUBLE_EQ(view.fpsCaptured, 5.0);
  EXPECT_DOUBLE_EQ(view.fpsDetected, 2.0);
  EXPECT_DOUBLE_EQ(view.captureCpuShare, 0.0) << "no capture thread ran";
  c.captured += 8;
  CameraRates::update(view, t0 + 6s);
  EXPECT_DOUBLE_EQ(view.fpsCaptured, 2.0) << "the next window starts where the last ended";
  EXPECT_DOUBLE_EQ(view.fpsDetected, 0.0);
}

TEST(CameraRatesTest, GatedFramesArePricedOnceAtTheDetectorsRecentCost) {
  auto channel = std::make_shared<CameraChannel>("door", 5.0);
  CameraView view = viewOf(channel);
  CameraRates rates;
  rates.detectorRan({10, 20, 10});  // the first frame sets the average: 40 ms
  channel->counters().gated += 5;
  rates.priceGated(view);
  EXPECT_NEAR(view.gatedSeconds, 5 * 0.040, 1e-9);
  rates.priceGated(view);
  EXPECT_NEAR(view.gatedSeconds, 5 * 0.040, 1e-9) << "each gated frame priced once";
  rates.detectorRan({60, 60, 20});  // 140 ms moves the average by 5 % of the difference
  channel->counters().gated += 1;
  rates.priceGated(view);
  EXPECT_NEAR(view.gatedSeconds, 5 * 0.040 + 0.045, 1e-9);
}

}  // namespace
}  // namespace vigil
