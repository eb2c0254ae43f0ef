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

// A picture of one level with single bright pixels (salt noise) on it.
cv::Mat speckled() {
  cv::Mat img(40, 40, CV_8UC3, cv::Scalar(40, 60, 80));
  for (int i = 3; i < 40; i += 7) img.at<cv::Vec3b>(i, i) = cv::Vec3b(255, 255, 255);
  return img;
}

TEST(LetterboxTest, DenoiseTakesSpecklesOutWithAThreeByThreeMedian) {
  const cv::Mat img = speckled();
  Tensor t;
  Letterbox off(spec(40, 40));
  off.run(img, t);
  EXPECT_FLOAT_EQ(at(t, 2, 10, 10), 255) << "a speckle stays without denoise";
  Letterbox on(spec(40, 40), true);
  on.run(img, t);
  EXPECT_FLOAT_EQ(at(t, 2, 10, 10), 80) << "the median removes it";
  EXPECT_FLOAT_EQ(at(t, 0, 3, 3), 40);
  EXPECT_FLOAT_EQ(at(t, 1, 20, 20), 60) << "the rest of the picture unchanged";
  // Into an 80x40 input: the picture at the left, the padding beside it stays the pad value.
  Letterbox wide(spec(80, 40), true);
  wide.run(img, t);
  EXPECT_FLOAT_EQ(at(t, 0, 20, 39), 40);
  EXPECT_FLOAT_EQ(at(t, 0, 20, 40), 114);
}

// Fitted (a backend that takes any size): the canvas is the resized picture rounded up to the
// stride, within the declared size; the picture placed and scaled exactly as in the square.
TEST(LetterboxTest, AFittedInputIsThePictureRoundedUpToTheStride) {
  struct Case {
    int cols, rows;     // the picture
    int width, height;  // the input made
  };
  const Case cases[] = {
      {640, 360, 416, 256},    // 16:9: 416x234 rounded up
      {640, 480, 416, 320},    // 4:3: 416x312
      {360, 640, 256, 416},    // portrait 9:16
      {500, 500, 416, 416},    // square: nothing to leave out
      {1000, 10, 416, 32},     // a strip: 416x4, one stride high
      {1920, 1080, 416, 256},  // 1080p
  };
  for (const Case& c : cases) {
    Letterbox fitted(spec(416, 416));
    fitted.setFit(32);
    Letterbox square(spec(416, 416));
    cv::Mat img(c.rows, c.cols, CV_8UC3);
    cv::randu(img, cv::Scalar::all(0), cv::Scalar::all(255));
    Tensor t;
    Tensor full;
    const LetterboxInfo info = fitted.run(img, t);
    const LetterboxInfo squareInfo = square.run(img, full);
    const std::string name = std::to_string(c.cols) + "x" + std::to_string(c.rows);
    ASSERT_EQ(t.shape, (std::vector<std::int64_t>{1, 3, c.height, c.width})) << name;
    EXPECT_EQ(info.inputWidth, c.width) << name;
    EXPECT_EQ(info.inputHeight, c.height) << name;
    EXPECT_FLOAT_EQ(info.scale, squareInfo.scale) << name;
    EXPECT_EQ(squareInfo.inputWidth, 0) << name << ": the square input is the declared size";
    // Every pixel of the fitted input is the square input's pixel at the same place.
    for (int ch = 0; ch < 3; ++ch) {
      for (int y = 0; y < c.height; ++y) {
        for (int x = 0; x < c.width; ++x) {
          ASSERT_EQ(at(t, ch, y, x), at(full, ch, y, x)) << name << " at " << x << "," << y;
        }
      }
    }
  }
}

}  // namespace
}  // namespace vigil
