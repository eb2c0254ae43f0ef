#include "detector/annotate.h"

#include <gtest/gtest.h>

#include <opencv2/imgproc.hpp>

namespace vigil {
namespace {

const cv::Scalar kLabelRed(40, 40, 230);

// Pixels of the white label text: every channel bright (the boxes and backgrounds are not).
int whiteTextPixels(const cv::Mat& image) {
  cv::Mat white;
  cv::inRange(image, cv::Scalar(200, 200, 200), cv::Scalar(255, 255, 255), white);
  return cv::countNonZero(white);
}

// The white pixels of `label` drawn whole, in the style of a `picture`-sized picture, on a
// canvas of its background's colour with room all round.
int wholeLabelPixels(const std::string& label, cv::Size picture) {
  const LabelStyle style = labelStyle(picture);
  cv::Mat canvas(picture.height * 2, picture.width * 3, CV_8UC3, kLabelRed);
  cv::putText(canvas, label, cv::Point(picture.width, picture.height), cv::FONT_HERSHEY_SIMPLEX,
              style.fontScale, cv::Scalar(255, 255, 255), style.textThickness, cv::LINE_AA);
  return whiteTextPixels(canvas);
}

bool insidePicture(const cv::Rect& rect, cv::Size picture) {
  return (rect & cv::Rect(cv::Point(0, 0), picture)) == rect;
}

TEST(AnnotateTest, LabelOfABoxAtTheRightEdgeIsDrawnWholeInsideThePicture) {
  const cv::Size size(640, 360);
  cv::Mat image(size, CV_8UC3, cv::Scalar(0, 0, 0));
  const LabelledBox box{Box{610, 100, 30, 120}, kLabelRed, "middle 8 eastbound"};
  const std::vector<cv::Rect> places = labelPlacements(size, {box});
  ASSERT_EQ(places.size(), 1U);
  EXPECT_TRUE(insidePicture(places[0], size)) << places[0];
  EXPECT_EQ(places[0].x + places[0].width, size.width) << "shifted left to the edge";
  EXPECT_EQ(places[0].y + places[0].height, 100) << "above the box: there is room";

  drawLabelledBoxes(image, {box});
  // Every pixel of the text is on the picture (none cut at the edge) and on its background.
  EXPECT_EQ(whiteTextPixels(image), wholeLabelPixels(box.label, size));
  EXPECT_EQ(whiteTextPixels(image(places[0])), whiteTextPixels(image));
}

TEST(AnnotateTest, LabelOfABoxAtTheTopGoesInsideTheBox) {
  const cv::Size size(640, 360);
  const std::vector<cv::Rect> places =
      labelPlacements(size, {LabelledBox{Box{100, 0, 80, 200}, kLabelRed, "person 0.85"}});
  ASSERT_EQ(places.size(), 1U);
  EXPECT_EQ(places[0].y, 0);
  EXPECT_EQ(places[0].x, 100);
  EXPECT_TRUE(insidePicture(places[0], size));
}

TEST(AnnotateTest, LabelsOfAdjacentBoxesDoNotOverlap) {
  const cv::Size size(640, 360);
  // Three persons side by side, their boxes narrower than their labels.
  const std::vector<LabelledBox> boxes{{Box{100, 80, 40, 150}, kLabelRed, "person 0.85"},
                                       {Box{145, 82, 40, 150}, kLabelRed, "person 0.87"},
                                       {Box{190, 79, 40, 150}, kLabelRed, "person 0.91"}};
  const std::vector<cv::Rect> places = labelPlacements(size, boxes);
  ASSERT_EQ(places.size(), 3U);
  for (std::size_t i = 0; i < places.size(); ++i) {
    EXPECT_TRUE(insidePicture(places[i], size)) << places[i];
    for (std::size_t j = i + 1; j < places.size(); ++j) {
      EXPECT_EQ((places[i] & places[j]).area(), 0) << places[i] << " and " << places[j];
    }
  }
  cv::Mat image(size, CV_8UC3, cv::Scalar(0, 0, 0));
  drawLabelledBoxes(image, boxes);
  EXPECT_EQ(whiteTextPixels(image), wholeLabelPixels("person 0.85", size) +
                                        wholeLabelPixels("person 0.87", size) +
                                        wholeLabelPixels("person 0.91", size));
}

TEST(AnnotateTest, LabelsStayBelowAReservedBand) {
  const cv::Size size(640, 360);
  const std::vector<cv::Rect> places =
      labelPlacements(size, {LabelledBox{Box{10, 5, 80, 200}, kLabelRed, "person 0.85"}}, 30);
  ASSERT_EQ(places.size(), 1U);
  EXPECT_GE(places[0].y, 30);
}

TEST(AnnotateTest, FontGrowsWithThePicture) {
  EXPECT_DOUBLE_EQ(labelStyle({640, 360}).fontScale, 0.6);
  EXPECT_DOUBLE_EQ(labelStyle({1920, 1080}).fontScale, 1.5);
  const std::vector<cv::Rect> places = labelPlacements(
      {1920, 1080}, {LabelledBox{Box{800, 400, 100, 300}, kLabelRed, "person 0.85"}});
  ASSERT_EQ(places.size(), 1U);
  EXPECT_GE(places[0].height, 40) << "readable on a 1920-wide picture";
}

}  // namespace
}  // namespace vigil
