#include "detector/annotate.h"

#include <fmt/format.h>

#include <algorithm>
#include <opencv2/imgproc.hpp>

namespace vigil {

void drawLabelledBox(cv::Mat& image, const Box& box, const cv::Scalar& colour,
                     const std::string& label) {
  const int thickness = std::max(1, std::min(image.cols, image.rows) / 300);
  const double fontScale = std::max(0.4, std::min(image.cols, image.rows) / 900.0);
  cv::Rect rect(cv::Point(static_cast<int>(box.x), static_cast<int>(box.y)),
                cv::Point(static_cast<int>(box.right()), static_cast<int>(box.bottom())));
  cv::rectangle(image, rect, colour, thickness);
  int baseline = 0;
  cv::Size size = cv::getTextSize(label, cv::FONT_HERSHEY_SIMPLEX, fontScale, 1, &baseline);
  cv::Point origin(rect.x, std::max(rect.y, size.height + baseline));
  cv::rectangle(image, origin + cv::Point(0, baseline),
                origin + cv::Point(size.width, -size.height), colour, cv::FILLED);
  cv::putText(image, label, origin, cv::FONT_HERSHEY_SIMPLEX, fontScale, cv::Scalar(255, 255, 255),
              1, cv::LINE_AA);
}

void drawDetections(cv::Mat& image, const std::vector<Detection>& detections,
                    const std::vector<std::string>& classNames) {
  for (const Detection& d : detections) {
    // Person in red, everything else in a colour derived from the class id.
    cv::Scalar colour = d.classId == 0 ? cv::Scalar(40, 40, 230)
                                       : cv::Scalar((d.classId * 67) % 256, (d.classId * 131) % 256,
                                                    (d.classId * 29) % 256);
    std::string name = d.classId >= 0 && static_cast<std::size_t>(d.classId) < classNames.size()
                           ? classNames[static_cast<std::size_t>(d.classId)]
                           : std::to_string(d.classId);
    drawLabelledBox(image, d.box, colour, fmt::format("{} {:.2f}", name, d.score));
  }
}

cv::Point2d scaleBetween(cv::Size from, cv::Size to) {
  if (from.empty() || to.empty()) return {1, 1};
  return {static_cast<double>(to.width) / from.width, static_cast<double>(to.height) / from.height};
}

std::vector<Detection> scaledTo(const std::vector<Detection>& detections, cv::Size from,
                                cv::Size to) {
  const cv::Point2d scale = scaleBetween(from, to);
  std::vector<Detection> out = detections;
  for (Detection& d : out) d.box = scaledBox(d.box, scale.x, scale.y);
  return out;
}

}  // namespace vigil
