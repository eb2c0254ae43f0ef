#include "daemon/capture/frame/frame_sampler.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <opencv2/imgcodecs.hpp>

#include "daemon/config/config_file.h"
#include "tests/temp_dir.h"

namespace vigil {
namespace {

using std::chrono::seconds;

cv::Mat picture() { return cv::Mat(48, 64, CV_8UC3, cv::Scalar(10, 120, 200)); }

int filesIn(const std::filesystem::path& dir) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) n += e.is_regular_file() ? 1 : 0;
  return n;
}

TEST(FrameSamplerTest, SavesOneFramePerIntervalUpToTheMaximum) {
  TempDir tmp;
  const auto dir = tmp.path() / "samples";
  FrameSampler sampler({dir, 10, 3}, "door");
  const SteadyClock::time_point start{};
  EXPECT_TRUE(sampler.offer(picture(), start));
  EXPECT_FALSE(sampler.offer(picture(), start + seconds(9)));
  EXPECT_TRUE(sampler.offer(picture(), start + seconds(10)));
  EXPECT_TRUE(sampler.offer(picture(), start + seconds(25)));
  EXPECT_FALSE(sampler.offer(picture(), start + seconds(100))) << "max_frames is 3";
  EXPECT_EQ(filesIn(dir), 3);
  cv::Mat back = cv::imread((dir / "door-000002.jpg").string());
  ASSERT_FALSE(back.empty());
  EXPECT_EQ(back.size(), picture().size());
  EXPECT_NEAR(back.at<cv::Vec3b>(20, 30)[2], 200, 3) << "JPEG quality 95 keeps the colour";
}

TEST(FrameSamplerTest, ARestartCountsTheFramesAlreadyThereAndNeverOverwrites) {
  TempDir tmp;
  {
    FrameSampler first({tmp.path(), 1, 3}, "door");
    ASSERT_TRUE(first.offer(picture(), SteadyClock::time_point{}));
    ASSERT_TRUE(first.offer(picture(), SteadyClock::time_point{} + seconds(1)));
  }
  std::ofstream(tmp.path() / "yard-000001.jpg") << "another camera's";
  FrameSampler second({tmp.path(), 1, 3}, "door");
  EXPECT_EQ(second.saved(), 2);
  EXPECT_TRUE(second.offer(picture(), SteadyClock::time_point{}));
  EXPECT_TRUE(std::filesystem::exists(tmp.path() / "door-000003.jpg"));
  EXPECT_FALSE(second.offer(picture(), SteadyClock::time_point{} + seconds(5)));
}

TEST(FrameSamplerTest, AnUnwritableDirectoryEndsSamplingWithoutThrowing) {
  TempDir tmp;
  std::ofstream(tmp.path() / "file") << "not a directory";
  FrameSampler sampler({tmp.path() / "file" / "sub", 1, 5}, "door");
  EXPECT_FALSE(sampler.offer(picture(), SteadyClock::time_point{}));
  EXPECT_FALSE(sampler.offer(picture(), SteadyClock::time_point{} + seconds(60)));
  EXPECT_EQ(sampler.saved(), 0);
}

TEST(FrameSamplerTest, TheSectionIsOffByDefaultAndResolvedAgainstTheFile) {
  auto off = parseConfig("version: 1\ncameras:\n  - {name: a, source: /dev/video0}\n",
                         "/etc/vigil/cameras.yaml");
  ASSERT_TRUE(off.has_value()) << off.error().message;
  EXPECT_FALSE(off->cameras[0].calibrationSamples.enabled());
  auto on = parseConfig(
      "version: 1\ncameras:\n  - name: a\n    source: /dev/video0\n"
      "    calibration_samples: {dir: calib, interval_s: 30}\n",
      "/etc/vigil/cameras.yaml");
  ASSERT_TRUE(on.has_value()) << on.error().message;
  EXPECT_EQ(on->cameras[0].calibrationSamples.dir, "/etc/vigil/calib");
  EXPECT_EQ(on->cameras[0].calibrationSamples.intervalS, 30);
  EXPECT_EQ(on->cameras[0].calibrationSamples.maxFrames, 200);
  auto bad = parseConfig(
      "version: 1\ncameras:\n  - name: a\n    source: /dev/video0\n"
      "    calibration_samples: {dir: calib, interval_s: 0}\n",
      "/etc/vigil/cameras.yaml");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("cameras[0].calibration_samples.interval_s"),
            std::string::npos)
      << bad.error().message;
}

}  // namespace
}  // namespace vigil
