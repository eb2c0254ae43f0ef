#pragma once

#include <opencv2/core.hpp>
#include <string>
#include <vector>

#include "detector/box.h"

namespace vigil {

// One box (pixels) to draw, in `colour` (BGR), with its label.
struct LabelledBox {
  Box box;
  cv::Scalar colour;
  std::string label;
};

// The size of the drawn labels and box lines, grown with the picture: the font scale is
// width / 1280 (at least 0.6), so a label is as readable on a 1920-wide picture as on a 640-wide.
struct LabelStyle {
  double fontScale = 0.6;
  int textThickness = 1;
  int boxThickness = 1;
  int pad = 2;  // pixels of filled background around the text
};
LabelStyle labelStyle(cv::Size picture);

// Where each box's label goes (its filled background, pixels), one a box in order. Always inside
// the picture and below the top `reservedTop` rows (a caption band) when the picture has room:
// above the box when that is free, else inside the box's top, else below the box; a place is
// free when it is inside the picture and overlaps no label placed before it. When none is free,
// the first of them that overlaps least. Every place is shifted left so that it never passes
// the right edge (and right so that it never passes the left).
std::vector<cv::Rect> labelPlacements(cv::Size picture, const std::vector<LabelledBox>& boxes,
                                      int reservedTop = 0);

// Draws each box with its label on a filled background at labelPlacements().
void drawLabelledBoxes(cv::Mat& image, const std::vector<LabelledBox>& boxes, int reservedTop = 0);

// Each detection as a labelled box: its class name and score, persons in red, other classes in
// a colour derived from the class id.
std::vector<LabelledBox> labelledDetections(const std::vector<Detection>& detections,
                                            const std::vector<std::string>& classNames);

// Draws each detection's box with its class name and score onto `image` (BGR, in place), the
// labels below the top `reservedTop` rows.
void drawDetections(cv::Mat& image, const std::vector<Detection>& detections,
                    const std::vector<std::string>& classNames, int reservedTop = 0);

// How much larger `to` is than `from`, x and y (1, 1 when either is empty): what boxes found on
// a frame of `from` are scaled by to be drawn on a picture of `to`.
cv::Point2d scaleBetween(cv::Size from, cv::Size to);

// `detections` found on a frame of `from`, scaled onto a picture of `to`.
std::vector<Detection> scaledTo(const std::vector<Detection>& detections, cv::Size from,
                                cv::Size to);

}  // namespace vigil
