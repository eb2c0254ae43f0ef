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

}  // namespace vigil
