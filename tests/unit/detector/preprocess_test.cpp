#include "detector/preprocess.h"

#include <gtest/gtest.h>

#include <opencv2/imgproc.hpp>

namespace vigil {
namespace {

InputSpec spec(int w, int h) {
  InputSpec s;
  s.width = w;
  s.height = h;
  return s;
}

float at(const Tensor& t, int c, int y, int x) {
  const auto w = static_cast<std::size_t>(t.shape[3]);
  const auto h = static_cast<std::size_t>(t.shape[2]);
  return t.data[static_cast<std::size_t>(c) * w * h + static_cast<std::size_t>(y) * w +
                static_cast<std::size_t>(x)];
}

TEST(LetterboxTest, WideImageIsScaledToWidthAndPaddedBelow) {
  // 200x100 into 100x100: r = 0.5, resized to 100x50 at the top, rows 50.. are padding.
  cv::Mat img(100, 200, CV_8UC3, cv::Scalar(10, 20, 30));  // B=10, G=20, R=30
  Letterbox lb(spec(100, 100));
  Tensor t;
  LetterboxInfo info = lb.run(img, t);
  EXPECT_FLOAT_EQ(info.scale, 0.5F);
  EXPECT_EQ(info.sourceWidth, 200);
  ASSERT_EQ(t.shape, (std::vector<std::int64_t>{1, 3, 100, 100}));
  EXPECT_FLOAT_EQ(at(t, 0, 0, 0), 10);  // BGR order, raw 0..255
  EXPECT_FLOAT_EQ(at(t, 1, 49, 99), 20);
  EXPECT_FLOAT_EQ(at(t, 2, 49, 50), 30);
  EXPECT_FLOAT_EQ(at(t, 0, 50, 0), 114);
  EXPECT_FLOAT_EQ(at(t, 2, 99, 99), 114);
}

TEST(LetterboxTest, TallImageIsPaddedOnTheRightAndSizeTruncates) {
  // 100 wide x 300 high into 64x64: r = 64/300, width int(100*64/300) = int(21.33) = 21.
  cv::Mat img(300, 100, CV_8UC3, cv::Scalar(200, 200, 200));
  Letterbox lb(spec(64, 64));
  Tensor t;
  lb.run(img, t);
  EXPECT_FLOAT_EQ(at(t, 0, 63, 20), 200);
  EXPECT_FLOAT_EQ(at(t, 0, 0, 21), 114);
}

TEST(LetterboxTest, RgbOrderAndValueRangeAreApplied) {
  cv::Mat img(8, 8, CV_8UC3, cv::Scalar(0, 0, 255));  // pure red in BGR
  InputSpec s = spec(8, 8);
  s.channelOrder = ChannelOrder::kRgb;
  s.valueMin = 0;
  s.valueMax = 1;
  Letterbox lb(s);
  Tensor t;
  lb.run(img, t);
  EXPECT_FLOAT_EQ(at(t, 0, 3, 3), 1.0F);  // R plane first
  EXPECT_FLOAT_EQ(at(t, 2, 3, 3), 0.0F);
}

TEST(LetterboxTest, ReusesTensorStorageAcrossFrames) {
  Letterbox lb(spec(32, 32));
  Tensor t;
  cv::Mat a(40, 20, CV_8UC3, cv::Scalar(1, 2, 3));
  cv::Mat b(10, 50, CV_8UC3, cv::Scalar(4, 5, 6));
  lb.run(a, t);
  const float* storage = t.data.data();
  lb.run(b, t);
  EXPECT_EQ(t.data.data(), storage);
  // The second frame's padding covers what the first frame wrote.
  EXPECT_FLOAT_EQ(at(t, 0, 31, 0), 114);
  EXPECT_FLOAT_EQ(at(t, 0, 0, 0), 4);
}

TEST(LetterboxTest, MatchesBilinearResizeOfTheReferenceRule) {
  // Against cv::resize itself on a gradient: the letterbox must not resample differently.
  cv::Mat img(120, 160, CV_8UC3);
  for (int y = 0; y < img.rows; ++y) {
    for (int x = 0; x < img.cols; ++x) {
      img.at<cv::Vec3b>(y, x) =
          cv::Vec3b(static_cast<uchar>(x), static_cast<uchar>(y), static_cast<uchar>((x + y) / 2));
    }
  }
  cv::Mat expected;
  cv::resize(img, expected, cv::Size(64, 48), 0, 0, cv::INTER_LINEAR);
  Letterbox lb(spec(64, 64));
  Tensor t;
  lb.run(img, t);
  for (int y = 0; y < 48; y += 7) {
    for (int x = 0; x < 64; x += 5) {
      cv::Vec3b px = expected.at<cv::Vec3b>(y, x);
      for (int c = 0; c < 3; ++c) EXPECT_FLOAT_EQ(at(t, c, y, x), px[c]);
    }
  }
}

// A picture of one level with single bright pixels (salt noise) on it, `bgr` or grey.
cv::Mat speckled(bool grey) {
  cv::Mat img(40, 40, CV_8UC3, grey ? cv::Scalar(60, 60, 60) : cv::Scalar(40, 60, 80));
  for (int i = 3; i < 40; i += 7) img.at<cv::Vec3b>(i, i) = cv::Vec3b(255, 255, 255);
  return img;
}

TEST(LetterboxTest, DenoiseTakesTheSpecklesOutOfGreyPicturesOnlyWhenAskedForGrey) {
  const cv::Mat grey = speckled(true);
  const cv::Mat colour = speckled(false);
  EXPECT_TRUE(isGrey(grey));
  EXPECT_FALSE(isGrey(colour));
  Tensor t;
  Letterbox off(spec(40, 40), Denoise::kOff);
  off.run(grey, t);
  EXPECT_FLOAT_EQ(at(t, 1, 10, 10), 255) << "a speckle stays without denoise";
  Letterbox byGrey(spec(40, 40), Denoise::kGrey);
  byGrey.run(grey, t);
  EXPECT_FLOAT_EQ(at(t, 1, 10, 10), 60) << "grey: the 3x3 median removes it";
  EXPECT_FLOAT_EQ(at(t, 1, 3, 3), 60);
  byGrey.run(colour, t);
  EXPECT_FLOAT_EQ(at(t, 2, 10, 10), 255) << "a colour picture is left as it is";
  Letterbox on(spec(40, 40), Denoise::kOn);
  on.run(colour, t);
  EXPECT_FLOAT_EQ(at(t, 2, 10, 10), 80) << "on: every picture";
  EXPECT_FLOAT_EQ(at(t, 0, 20, 20), 40);
}

TEST(LetterboxTest, DenoiseNamesAreWhatTheConfigurationTakes) {
  EXPECT_EQ(denoiseFromName("grey"), Denoise::kGrey);
  EXPECT_EQ(denoiseFromName("on"), Denoise::kOn);
  EXPECT_EQ(denoiseFromName("off"), Denoise::kOff);
  EXPECT_FALSE(denoiseFromName("true").has_value());
  EXPECT_EQ(denoiseName(Denoise::kGrey), "grey");
}

// Within 2 of 255 on average is grey: what a camera's codec leaves of an IR picture's chroma.
TEST(LetterboxTest, APictureIsGreyWhileItsChannelsDifferByLessThanTwoOnAverage) {
  cv::Mat img(20, 20, CV_8UC3, cv::Scalar(50, 50, 51));
  EXPECT_TRUE(isGrey(img)) << "1 of 255 apart";
  img.setTo(cv::Scalar(50, 51, 52));
  EXPECT_FALSE(isGrey(img)) << "2 apart: a colour scene, however dim";
}

}  // namespace
}  // namespace vigil
