// The best frame of an event kept for its snapshot (EventSnapshot), on its own: a copy of the
// frame kept, due once per best frame, its persons drawn where they are on a larger picture,
// and a frame that does not decode warned about with the last JPEG kept.
#include "daemon/events/event_snapshot.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <string>
#include <vector>

#include "tests/bogus_jpeg.h"
#include "tests/log_capture.h"
#include "tests/unit/daemon/events/event_test_clock.h"

namespace vigil {
namespace {

// The detector's frame is 600x300; the picture kept is three times as large, as a picture
// stream's is, so a box drawn unscaled would be somewhere else.
constexpr int kSnapshotDetectWidth = 600;
constexpr int kSnapshotDetectHeight = 300;
const cv::Size kSnapshotPicture(1800, 900);
const cv::Scalar kSnapshotGrey(128, 128, 128);

ObservedFrame snapshotFrame(std::uint64_t id, const CapturedPicture& picture,
                            const std::vector<Detection>& detections) {
  ObservedFrame f;
  f.camera = "porch";
  f.sequence = id;
  f.id = id;
  f.width = kSnapshotDetectWidth;
  f.height = kSnapshotDetectHeight;
  f.captureTime = event_test::at(0);
  f.captureMonotonic = event_test::monotonicAt(0);
  f.detections = &detections;
  f.picture = &picture;
  return f;
}

cv::Mat decodedSnapshot(const std::string& jpeg) {
  return cv::imdecode(std::vector<unsigned char>(jpeg.begin(), jpeg.end()), cv::IMREAD_COLOR);
}

// How far the pixel at (x, y) is from the plain grey picture: drawn on, or not.
int offGrey(const cv::Mat& picture, int x, int y) {
  const cv::Vec3b p = picture.at<cv::Vec3b>(y, x);
  int most = 0;
  for (int c = 0; c < 3; ++c) most = std::max(most, std::abs(static_cast<int>(p[c]) - 128));
  return most;
}

TEST(EventSnapshotTest, AKeptFrameIsDueForItsBestFrameUntilEncoded) {
  CapturedPicture picture;
  picture.bgrForWriting(kSnapshotPicture).setTo(kSnapshotGrey);
  const std::vector<Detection> nobody;
  EventSnapshot snapshot;
  EXPECT_FALSE(snapshot.holds(5));
  EXPECT_FALSE(snapshot.due(5));
  EXPECT_EQ(snapshot.jpeg(), "");

  snapshot.keep(snapshotFrame(5, picture, nobody));
  EXPECT_TRUE(snapshot.holds(5));
  EXPECT_FALSE(snapshot.holds(6));
  EXPECT_TRUE(snapshot.due(5));
  EXPECT_FALSE(snapshot.due(6)) << "another frame is the best: this one is not due";
  EXPECT_EQ(snapshot.jpeg(), "") << "nothing encoded before it is published";

  ASSERT_TRUE(snapshot.encode("porch"));
  EXPECT_FALSE(snapshot.due(5)) << "encoded once per best frame";
  EXPECT_TRUE(snapshot.holds(5));
  const std::string first = snapshot.jpeg();
  EXPECT_EQ(decodedSnapshot(first).size(), kSnapshotPicture);

  snapshot.keep(snapshotFrame(9, picture, nobody));
  EXPECT_TRUE(snapshot.due(9));
  EXPECT_EQ(snapshot.jpeg(), first) << "the last JPEG made until the next is encoded";
}

TEST(EventSnapshotTest, TheFrameIsKeptAsACopyOfItsPicture) {
  CapturedPicture picture;
  picture.bgrForWriting(kSnapshotPicture).setTo(kSnapshotGrey);
  const std::vector<Detection> nobody;
  EventSnapshot snapshot;
  snapshot.keep(snapshotFrame(5, picture, nobody));
  picture.bgrForWriting(kSnapshotPicture).setTo(cv::Scalar(0, 0, 0));  // the slot refilled
  ASSERT_TRUE(snapshot.encode("porch"));
  EXPECT_LT(offGrey(decodedSnapshot(snapshot.jpeg()), 900, 450), 10)
      << "the kept frame, not what its slot holds now";
}

TEST(EventSnapshotTest, PersonsAreDrawnScaledToThePictureAndOtherDetectionsAreNot) {
  CapturedPicture picture;
  picture.bgrForWriting(kSnapshotPicture).setTo(kSnapshotGrey);
  const std::vector<Detection> detections{
      {Box{100, 50, 100, 100}, 0.9F, 0},  // a person: drawn at 300..600 x 150..450
      {Box{400, 100, 60, 60}, 0.9F, 2},   // a car: at 1200..1380 x 300..480, not drawn
  };
  EventSnapshot snapshot;
  snapshot.keep(snapshotFrame(5, picture, detections));
  ASSERT_TRUE(snapshot.encode("porch"));
  const cv::Mat drawn = decodedSnapshot(snapshot.jpeg());
  ASSERT_EQ(drawn.size(), kSnapshotPicture);
  EXPECT_GT(offGrey(drawn, 300, 375), 60) << "the person's left edge, scaled";
  EXPECT_GT(offGrey(drawn, 600, 375), 60) << "the person's right edge, scaled";
  EXPECT_LT(offGrey(drawn, 100, 110), 20) << "nothing where the unscaled box would be";
  EXPECT_LT(offGrey(drawn, 1200, 400), 20) << "the car is not drawn";
  EXPECT_LT(offGrey(drawn, 1380, 400), 20) << "the car is not drawn";
}

TEST(EventSnapshotTest, TheCameraAndTheTimeAreWrittenInTheTopLeftCorner) {
  CapturedPicture picture;
  picture.bgrForWriting(kSnapshotPicture).setTo(kSnapshotGrey);
  const std::vector<Detection> nobody;
  EventSnapshot snapshot;
  snapshot.keep(snapshotFrame(5, picture, nobody));
  ASSERT_TRUE(snapshot.encode("porch"));
  const cv::Mat drawn = decodedSnapshot(snapshot.jpeg());
  EXPECT_GT(offGrey(drawn, 2, 2), 60) << "the caption's dark band";
  cv::Mat band = drawn(cv::Rect(0, 0, 800, 60));
  cv::Mat grey;
  cv::cvtColor(band, grey, cv::COLOR_BGR2GRAY);
  EXPECT_GT(cv::countNonZero(grey > 220), 200) << "white text on the band";
  EXPECT_LT(offGrey(drawn, 1700, 800), 10) << "the rest of the picture as it was";
}

TEST(EventSnapshotTest, AFrameThatDoesNotDecodeIsWarnedAboutAndTheLastJpegStays) {
  std::vector<std::uint8_t> good;
  cv::imencode(".jpg", cv::Mat(kSnapshotPicture, CV_8UC3, kSnapshotGrey), good);
  CapturedPicture broken;
  broken.setJpeg(testing::withBogusHuffmanTable(good), kSnapshotPicture);
  CapturedPicture fine;
  fine.bgrForWriting(kSnapshotPicture).setTo(kSnapshotGrey);
  const std::vector<Detection> nobody;

  EventSnapshot snapshot;
  snapshot.keep(snapshotFrame(5, fine, nobody));
  ASSERT_TRUE(snapshot.encode("porch"));
  const std::string first = snapshot.jpeg();

  testing::LogCapture log("events");
  snapshot.keep(snapshotFrame(9, broken, nobody));
  EXPECT_FALSE(snapshot.encode("porch"));
  EXPECT_NE(log.text().find("[cam=porch] cannot decode the snapshot's frame: "), std::string::npos)
      << log.text();
  EXPECT_EQ(snapshot.jpeg(), first);
  EXPECT_TRUE(snapshot.due(9)) << "not made: still due";
}

}  // namespace
}  // namespace vigil
