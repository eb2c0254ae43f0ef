#include "detector/annotate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <opencv2/imgproc.hpp>

namespace vigil {

namespace {

constexpr int kFont = cv::FONT_HERSHEY_SIMPLEX;

struct TextSize {
  cv::Size text;
  int baseline = 0;
};

TextSize measure(const std::string& label, const LabelStyle& style) {
  TextSize size;
  size.text = cv::getTextSize(label, kFont, style.fontScale, style.textThickness, &size.baseline);
  return size;
}

cv::Rect pixels(const Box& box) {
  return {cv::Point(static_cast<int>(std::lround(box.x)), static_cast<int>(std::lround(box.y))),
          cv::Point(static_cast<int>(std::lround(box.right())),
                    static_cast<int>(std::lround(box.bottom())))};
}

}  // namespace

LabelStyle labelStyle(cv::Size picture) {
  LabelStyle style;
  style.fontScale = std::max(0.6, picture.width / 1280.0);
  style.textThickness = std::max(1, static_cast<int>(std::lround(style.fontScale * 1.5)));
  style.boxThickness = std::max(1, static_cast<int>(std::lround(style.fontScale * 2)));
  style.pad = std::max(2, static_cast<int>(std::lround(style.fontScale * 4)));
  return style;
}

std::vector<cv::Rect> labelPlacements(cv::Size picture, const std::vector<LabelledBox>& boxes,
                                      int reservedTop) {
  const LabelStyle style = labelStyle(picture);
  std::vector<cv::Rect> placed;
  placed.reserve(boxes.size());
  for (const LabelledBox& b : boxes) {
    const TextSize size = measure(b.label, style);
    const int width = std::min(picture.width, size.text.width + 2 * style.pad);
    const int height = std::min(picture.height, size.text.height + size.baseline + 2 * style.pad);
    const cv::Rect box = pixels(b.box);
    // Inside the picture: shifted left from the right edge, right from the left one.
    const int x = std::clamp(box.x, 0, picture.width - width);
    const int top = std::clamp(reservedTop, 0, picture.height - height);
    const int bottom = picture.height - height;
    // Above the box, inside its top, below it.
    const int wanted[] = {box.y - height, std::max(box.y, top), box.y + box.height};
    cv::Rect best;
    long bestOverlap = -1;
    for (const int y : wanted) {
      const cv::Rect rect(x, std::clamp(y, top, bottom), width, height);
      long overlap = 0;
      for (const cv::Rect& other : placed) overlap += (rect & other).area();
      if (overlap == 0 && y >= top && y <= bottom) {
        best = rect;
        break;
      }
      if (bestOverlap < 0 || overlap < bestOverlap) {
        best = rect;
        bestOverlap = overlap;
      }
    }
    placed.push_back(best);
  }
  return placed;
}

void drawLabelledBoxes(cv::Mat& image, const std::vector<LabelledBox>& boxes, int reservedTop) {
  const LabelStyle style = labelStyle(image.size());
  // The boxes first, then the labels over them: no box line crosses a label.
  for (const LabelledBox& b : boxes) {
    cv::rectangle(image, pixels(b.box), b.colour, style.boxThickness);
  }
  const std::vector<cv::Rect> places = labelPlacements(image.size(), boxes, reservedTop);
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    const cv::Rect& place = places[i];
    const TextSize size = measure(boxes[i].label, style);
    cv::rectangle(image, place, boxes[i].colour, cv::FILLED);
    cv::putText(image, boxes[i].label,
                cv::Point(place.x + style.pad, place.y + style.pad + size.text.height), kFont,
                style.fontScale, cv::Scalar(255, 255, 255), style.textThickness, cv::LINE_AA);
  }
}

std::vector<LabelledBox> labelledDetections(const std::vector<Detection>& detections,
                                            const std::vector<std::string>& classNames) {
  std::vector<LabelledBox> out;
  out.reserve(detections.size());
  for (const Detection& d : detections) {
    // Person in red, everything else in a colour derived from the class id.
    cv::Scalar colour = d.classId == 0 ? cv::Scalar(40, 40, 230)
                                       : cv::Scalar((d.classId * 67) % 256, (d.classId * 131) % 256,
                                                    (d.classId * 29) % 256);
    std::string name = d.classId >= 0 && static_cast<std::size_t>(d.classId) < classNames.size()
                           ? classNames[static_cast<std::size_t>(d.classId)]
                           : std::to_string(d.classId);
    out.push_back({d.box, colour, fmt::format("{} {:.2f}", name, d.score)});
  }
  return out;
}

void drawDetections(cv::Mat& image, const std::vector<Detection>& detections,
                    const std::vector<std::string>& classNames, int reservedTop) {
  drawLabelledBoxes(image, labelledDetections(detections, classNames), reservedTop);
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
