#pragma once

#include <opencv2/core.hpp>
#include <string>
#include <vector>

#include "detector/box.h"

namespace vigil {

// Draws one box (pixels) with a label on a filled strip above it, in `colour` (BGR).
void drawLabelledBox(cv::Mat& image, const Box& box, const cv::Scalar& colour,
                     const std::string& label);

// Draws each detection's box with its class name and score onto `image` (BGR, in place).
void drawDetections(cv::Mat& image, const std::vector<Detection>& detections,
                    const std::vector<std::string>& classNames);

// How much larger `to` is than `from`, x and y (1, 1 when either is empty): what boxes found on
// a frame of `from` are scaled by to be drawn on a picture of `to`.
cv::Point2d scaleBetween(cv::Size from, cv::Size to);

// `detections` found on a frame of `from`, scaled onto a picture of `to`.
std::vector<Detection> scaledTo(const std::vector<Detection>& detections, cv::Size from,
                                cv::Size to);

}  // namespace vigil
