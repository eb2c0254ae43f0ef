#include "daemon/capture/camera/picture_stream.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

using namespace std::chrono_literals;

const SteadyClock::time_point t0 = SteadyClock::now();

// A picture of `size` from `pool`, taken at t0, as the capture thread offers it.
FrameHandle pictureOf(const std::shared_ptr<FramePool>& pool, cv::Size size) {
  auto handle = pool->acquire();
  EXPECT_TRUE(handle.has_value());
  (*handle)->picture.bgrForWriting(size).setTo(cv::Scalar(10, 20, 30));
  (*handle)->captureTime = t0;
  return std::move(*handle);
}

TEST(PictureStreamTest, DecodesKeyframesOnlyUntilSomebodyWantsItsPicturesAndAgainAfter) {
  PictureStream stream("front");
  EXPECT_TRUE(stream.keyframesOnly()) << "nobody asked yet";
  const auto now = SteadyClock::now();
  stream.want(now);
  EXPECT_FALSE(stream.keyframesOnly());
  stream.want(now - PictureStream::kWantedFor - std::chrono::milliseconds(1));
  EXPECT_TRUE(stream.keyframesOnly()) << "a wish ends after kWantedFor";
  stream.personInView(now);
  EXPECT_TRUE(stream.keyframesOnly()) << "without MQTT snapshots a person wants nothing";
  stream.setWantedWhilePersonInView(true);
  stream.personInView(now);
  EXPECT_FALSE(stream.keyframesOnly()) << "snapshots at full size while a person is in view";
}

TEST(PictureStreamTest, GivesItsNewestPictureWhileUpAndOfTheDetectStreamsShape) {
  auto pool = FramePool::create(3);
  PictureStream stream("front");
  CapturedPicture shown;
  EXPECT_FALSE(stream.take({640, 360}, t0, shown)) << "nothing yet";
  stream.offer(pictureOf(pool, {1280, 720}));
  EXPECT_FALSE(stream.take({640, 360}, t0, shown)) << "a stream that is not up is not used";
  stream.counters().up = true;
  stream.offer(pictureOf(pool, {1920, 1080}));
  EXPECT_EQ(pool->available(), 2U) << "only the newest is kept";
  ASSERT_TRUE(stream.take({640, 360}, t0, shown));
  EXPECT_EQ(shown.size(), cv::Size(1920, 1080));
  EXPECT_EQ(stream.size(), cv::Size(1920, 1080));
  EXPECT_TRUE(stream.refused().empty());
  EXPECT_TRUE(stream.take({640, 360}, t0 - PictureStream::kMaxApart, shown));
  EXPECT_FALSE(stream.take({640, 360}, t0 + PictureStream::kMaxApart + 1ms, shown))
      << "a keyframe too old for the frame detected: its boxes would be drawn beside the persons";

  EXPECT_FALSE(stream.take({640, 480}, t0, shown)) << "4:3 boxes cannot be drawn on 16:9";
  EXPECT_NE(stream.refused().find("its 1920x1080 pictures and the 640x480 detect stream differ "
                                  "in aspect ratio"),
            std::string::npos)
      << stream.refused();
  EXPECT_TRUE(stream.take({642, 360}, t0, shown)) << "within 1 %";
  EXPECT_TRUE(stream.refused().empty()) << "said again only after it fits once more";

  stream.detach();
  EXPECT_EQ(pool->available(), 3U) << "the kept picture goes back to its pool";
  EXPECT_FALSE(stream.take({640, 360}, t0, shown));
}

TEST(PictureStreamTest, ItsCameraIsTheCamerasOwnWithThePictureSourceAndNothingToGate) {
  CameraConfig camera;
  camera.name = "door";
  camera.source = "rtsp://192.0.2.1/sub";
  camera.kind = SourceKind::kRtsp;
  camera.location = "rtsp://u:p@192.0.2.1/sub";
  camera.motion.enabled = true;
  camera.picture.source = "rtsp://192.0.2.1/main";
  camera.picture.kind = SourceKind::kRtsp;
  camera.picture.location = "rtsp://u:p@192.0.2.1/main";
  const CameraConfig pictures = pictureCameraConfig(camera);
  EXPECT_EQ(pictures.name, "door/picture");
  EXPECT_EQ(pictures.source, "rtsp://192.0.2.1/main");
  EXPECT_EQ(pictures.location, "rtsp://u:p@192.0.2.1/main");
  EXPECT_FALSE(pictures.motion.enabled);
  EXPECT_FALSE(pictures.picture.enabled());
}

// What /metrics reads of it: whether it delivers pictures (vigil_camera_picture_stream_up).
TEST(PictureStreamTest, ReportsWhetherItIsUp) {
  PictureStream stream("door");
  FigureList figures;
  stream.report(figures);
  ASSERT_EQ(figures.figures().size(), 1U);
  EXPECT_EQ(figures.figures()[0].name->metric, "vigil_camera_picture_stream_up");
  EXPECT_EQ(std::get<double>(figures.figures()[0].value), 0);
  stream.counters().up = true;
  FigureList up;
  stream.report(up);
  EXPECT_EQ(std::get<double>(up.figures()[0].value), 1);
}

}  // namespace
}  // namespace vigil
