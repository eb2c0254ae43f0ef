// The file: source on a real clip: replayed at the file's own rate, and while its camera is idle
// only its keyframes decoded, the time between them still taken, the pictures numbered as in the
// file.
#include "daemon/capture/ffmpeg/file_source.h"

#include <gtest/gtest.h>

#include <chrono>
#include <opencv2/core.hpp>
#include <vector>

#include "daemon/settings/settings.h"
#include "tests/clip_pictures.h"
#include "tests/model_paths.h"

namespace vigil {
namespace {

// A file camera of TUD-Campus: 71 pictures at 25 frames/s, a keyframe every 12 (0, 12, ..., 60),
// and those pictures decoded one by one (`eager`), to tell which one a source delivered.
class FileSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto clip = testing::videosDir() / "TUD-Campus.mp4";
    ASSERT_TRUE(std::filesystem::exists(clip)) << "clip absent: " << clip;
    eager = testing::eagerFrames(clip);
    ASSERT_EQ(eager.size(), 71U);
    camera.location = clip.string();
  }

  std::vector<cv::Mat> eager;
  CameraConfig camera;
};

TEST_F(FileSourceTest, AnIdleFileCameraDecodesOnlyKeyframesAtTheFilesOwnPace) {
  auto source = makeFileSource(camera);
  auto info = source->open();
  ASSERT_TRUE(info.has_value()) << info.error().message;
  ASSERT_DOUBLE_EQ(info->fps, 25);
  source->setKeyframesOnly(true);
  EXPECT_TRUE(source->skippingToKeyframe());
  Frame frame;
  std::vector<std::uint64_t> numbers;  // the pictures' frame numbers in the file
  auto readPicture = [&] {
    auto ok = source->read(frame, std::chrono::seconds(1));
    EXPECT_TRUE(ok.has_value()) << ok.error().message;
    numbers.push_back(frame.sequence);
    return ok ? frame.picture.bgr()->clone() : cv::Mat();
  };
  EXPECT_LT(testing::meanAbsDiff(readPicture(), eager[0]), 1.5);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_LT(testing::meanAbsDiff(readPicture(), eager[12]), 1.5);
  EXPECT_LT(testing::meanAbsDiff(readPicture(), eager[24]), 1.5);
  // Not raced through: the 24 packets' 40 ms periods passed, less the one period a late start
  // may catch up and some slack (a lower bound: a slow machine only makes it longer).
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(20 * 40));

  // Told to resume: every picture again.
  source->setKeyframesOnly(false);
  EXPECT_FALSE(source->skippingToKeyframe());
  EXPECT_LT(testing::meanAbsDiff(readPicture(), eager[25]), 1.5);
  EXPECT_LT(testing::meanAbsDiff(readPicture(), eager[26]), 1.5);
  // Numbered as in the file, the skipped pictures counted (what tracks and events refer to).
  EXPECT_EQ(numbers, (std::vector<std::uint64_t>{0, 12, 24, 25, 26}));
}

// A picture stream's file nobody watches: one keyframe decoded in 10 s of the video (the clip,
// 2.84 s with a keyframe every 0.48 s, looped: its first keyframe only, again when it starts
// over); asked to resume, every picture again from there.
TEST_F(FileSourceTest, APictureStreamNobodyWatchesDecodesOneKeyframeInTenSecondsAndResumesAtOnce) {
  camera.loop = true;
  camera.picturesOnly = true;
  auto source = makeFileSource(camera);
  ASSERT_TRUE(source->open().has_value());
  source->setKeyframesOnly(true);
  Frame frame;
  // The eager frame a picture is (the nearest by mean absolute difference).
  auto which = [&] {
    const cv::Mat picture = frame.picture.bgr()->clone();
    std::size_t best = 0;
    for (std::size_t i = 1; i < eager.size(); ++i) {
      if (testing::meanAbsDiff(picture, eager[i]) < testing::meanAbsDiff(picture, eager[best])) {
        best = i;
      }
    }
    return best;
  };
  auto readPicture = [&] {
    for (int i = 0; i < 10; ++i) {
      auto ok = source->read(frame, std::chrono::seconds(1));
      if (ok) return true;
      EXPECT_EQ(ok.error().code, ErrorCode::kTimeout) << ok.error().message;
    }
    return false;
  };
  ASSERT_TRUE(readPicture());
  EXPECT_EQ(which(), 0U) << "the first keyframe: the stream is known alive";
  const auto first = std::chrono::steady_clock::now();
  ASSERT_TRUE(readPicture());
  // Keyframes 12 to 60 were not decoded: the next picture is the clip's first again, a loop
  // later (a lower bound: a slow machine only makes it longer).
  EXPECT_GE(std::chrono::steady_clock::now() - first, std::chrono::milliseconds(2500));
  EXPECT_EQ(which(), 0U);

  source->setKeyframesOnly(false);
  ASSERT_TRUE(readPicture());
  EXPECT_EQ(which(), 1U) << "every picture again";
}

}  // namespace
}  // namespace vigil
