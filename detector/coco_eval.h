#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "detector/box.h"
#include "foundation/error.h"

namespace vigil {

// COCO-style bounding-box evaluation of one category, following pycocotools' COCOeval rules:
// IoU thresholds 0.50:0.05:0.95, 101-point interpolated precision, area range "all", greedy
// matching of detections in descending score order, crowd regions (iscrowd=1) matched without
// being consumed and never counted as positives or false positives, at most maxDetections
// detections per image (the highest scoring), images with neither ground truth nor detections
// left out.

struct CocoImage {
  std::int64_t id = 0;
  std::string fileName;
  int width = 0;
  int height = 0;
};

struct CocoAnnotation {
  std::int64_t imageId = 0;
  Box box;          // COCO bbox [x, y, w, h] in pixels
  double area = 0;  // the annotation's "area" field (used only for area ranges)
  bool isCrowd = false;
};

struct CocoDataset {
  std::vector<CocoImage> images;            // in file order
  std::vector<CocoAnnotation> annotations;  // only those of the requested category
};

// Reads a COCO annotation file, keeping the annotations of categoryId. Errors name the file
// and the offending entry (e.g. "annotations.json: annotations[3].bbox: expected 4 numbers").
Expected<CocoDataset> loadCocoDataset(const std::filesystem::path& file, int categoryId);

struct ScoredBox {
  Box box;
  float score = 0;
};

struct CocoMetrics {
  double ap = -1;     // mean precision over IoU 0.50:0.95 and 101 recall points; -1 if undefined
  double ap50 = -1;   // at IoU 0.50
  double ap75 = -1;   // at IoU 0.75
  double ar = -1;     // recall at maxDetections, averaged over IoU 0.50:0.95
  int images = 0;     // images in the dataset
  int positives = 0;  // non-crowd ground-truth boxes
};

// detections: per image id, in any order. Image ids not in the dataset are ignored.
CocoMetrics evaluateCoco(const CocoDataset& dataset,
                         const std::map<std::int64_t, std::vector<ScoredBox>>& detections,
                         int maxDetections = 100);

}  // namespace vigil
