#include "detector/annotate.h"

#include <fmt/format.h>

#include <algorithm>
#include <opencv2/imgproc.hpp>

namespace vigil {

void drawDetections(cv::Mat& image, const std::vector<Detection>& detections,
                    const std::vector<std::string>& classNames) {
  const int thickness = std::max(1, std::min(image.cols, image.rows) / 300);
  const double fontScale = std::max(0.4, std::min(image.cols, image.rows) / 900.0);
  for (const Detection& d : detections) {
    // Person in red, everything else in a colour derived from the class id.
    cv::Scalar colour = d.classId == 0 ? cv::Scalar(40, 40, 230)
                                       : cv::Scalar((d.classId * 67) % 256, (d.classId * 131) % 256,
                                                    (d.classId * 29) % 256);
    cv::Rect rect(cv::Point(static_cast<int>(d.box.x), static_cast<int>(d.box.y)),
                  cv::Point(static_cast<int>(d.box.right()), static_cast<int>(d.box.bottom())));
    cv::rectangle(image, rect, colour, thickness);
    std::string name = d.classId >= 0 && static_cast<std::size_t>(d.classId) < classNames.size()
                           ? classNames[static_cast<std::size_t>(d.classId)]
                           : std::to_string(d.classId);
    std::string label = fmt::format("{} {:.2f}", name, d.score);
    int baseline = 0;
    cv::Size size = cv::getTextSize(label, cv::FONT_HERSHEY_SIMPLEX, fontScale, 1, &baseline);
    cv::Point origin(rect.x, std::max(rect.y, size.height + baseline));
    cv::rectangle(image, origin + cv::Point(0, baseline),
                  origin + cv::Point(size.width, -size.height), colour, cv::FILLED);
    cv::putText(image, label, origin, cv::FONT_HERSHEY_SIMPLEX, fontScale,
                cv::Scalar(255, 255, 255), 1, cv::LINE_AA);
  }
}

}  // namespace vigil
