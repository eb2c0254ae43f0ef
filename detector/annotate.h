#pragma once

#include <opencv2/core.hpp>
#include <string>
#include <vector>

#include "detector/box.h"

namespace vigil {

// Draws each detection's box with its class name and score onto `image` (BGR, in place).
void drawDetections(cv::Mat& image, const std::vector<Detection>& detections,
                    const std::vector<std::string>& classNames);

}  // namespace vigil
