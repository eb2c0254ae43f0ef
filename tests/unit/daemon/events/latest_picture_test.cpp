#include "daemon/events/latest_picture.h"

#include <gtest/gtest.h>

#include "daemon/capture/frame/frame_pool.h"

namespace vigil {
namespace {

FrameResult resultWithFrame(FramePool& pool, cv::Scalar colour) {
  FrameResult r;
  r.width = 640;
  r.height = 480;
  r.captureTime = SteadyClock::now();
  r.frame = std::move(*pool.acquire());
  r.frame->picture.bgrForWriting(cv::Size(640, 480)).setTo(colour);
  return r;
}

TEST(LatestPicturesTest, AResultWithoutAFrameLeavesTheViewAsItWas) {
  LatestPictures pictures;
  CameraView view;
  FrameResult r;
  r.width = 640;
  r.height = 480;
  EXPECT_EQ(pictures.keep(r, view), nullptr);
  EXPECT_FALSE(view.hasFrame);
  EXPECT_EQ(view.frameVersion, 0U);
}

TEST(LatestPicturesTest, TheFrameItselfIsKeptWithAVersionNeverRepeatedAcrossCameras) {
  auto pool = FramePool::create(2);
  LatestPictures pictures;
  CameraView door;
  CameraView yard;
  {
    FrameResult r = resultWithFrame(*pool, cv::Scalar(1, 2, 3));
    EXPECT_EQ(pictures.keep(r, door), &door.latest);
  }
  {
    FrameResult r = resultWithFrame(*pool, cv::Scalar(4, 5, 6));
    pictures.keep(r, yard);
  }
  EXPECT_EQ(pool->available(), 2U) << "the frames went back to their pool: pictures are copies";
  EXPECT_TRUE(door.hasFrame);
  EXPECT_FALSE(door.latestFromPictureStream) << "no picture stream";
  EXPECT_EQ(door.detectSize, cv::Size(640, 480));
  auto bgr = door.latest.bgr();
  ASSERT_TRUE(bgr.has_value());
  EXPECT_EQ(bgr->at<cv::Vec3b>(0, 0), cv::Vec3b(1, 2, 3));
  EXPECT_EQ(door.frameVersion, 1U);
  EXPECT_EQ(yard.frameVersion, 2U);
  FrameResult again = resultWithFrame(*pool, cv::Scalar(7, 8, 9));
  pictures.keep(again, door);
  EXPECT_EQ(door.frameVersion, 3U);
}

}  // namespace
}  // namespace vigil
