#pragma once

#include <cstddef>
#include <filesystem>
#include <opencv2/core.hpp>
#include <opencv2/videoio.hpp>
#include <vector>

namespace vigil::testing {

// How far two BGR pictures of one size are apart: the mean absolute difference over every
// channel of every pixel (0 the same; around 1 two decoders' roundings of one picture).
inline double meanAbsDiff(const cv::Mat& a, const cv::Mat& b) {
  cv::Mat diff;
  cv::absdiff(a, b, diff);
  const cv::Scalar m = cv::mean(diff);
  return (m[0] + m[1] + m[2]) / 3;
}

// Every picture of a clip (its first `atMost`) as OpenCV decodes it, at once: what a reader's
// pictures are compared with.
inline std::vector<cv::Mat> eagerFrames(const std::filesystem::path& clip,
                                        std::size_t atMost = 100000) {
  std::vector<cv::Mat> frames;
  cv::VideoCapture capture(clip.string(), cv::CAP_FFMPEG);
  for (cv::Mat frame; frames.size() < atMost && capture.read(frame);) {
    frames.push_back(frame.clone());
  }
  return frames;
}

}  // namespace vigil::testing
