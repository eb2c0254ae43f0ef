#include "detector/region_detector.h"

#include <algorithm>
#include <cmath>

#include "detector/nms.h"

namespace vigil {

namespace {

// A cut person is detected again only from this score: the low-score boxes kept for tracking
// are mostly not persons, and each re-detection is an inference.
constexpr float kEdgeScore = 0.3F;
// Two regions within this ratio of scale see a person alike.
constexpr double kSameScale = 1.05;

// How close (in picture pixels) a box may come to a region's edge before it counts as cut:
// two pixels of the network's input.
double edgeTolerance(const cv::Rect& rect, cv::Size input) {
  return std::max(1.0, 2.0 / regionScale(rect, input));
}

bool cutBy(const Box& b, const cv::Rect& r, cv::Size picture, cv::Size input) {
  const double tol = edgeTolerance(r, input);
  const bool left = r.x > 0 && b.x <= r.x + tol;
  const bool top = r.y > 0 && b.y <= r.y + tol;
  const bool right = r.br().x < picture.width && b.right() >= r.br().x - tol;
  const bool bottom = r.br().y < picture.height && b.bottom() >= r.br().y - tol;
  return left || top || right || bottom;
}

}  // namespace

bool RegionDetector::heldWhole(const Box& box, const cv::Rect& rect, cv::Size picture) const {
  const bool inside = box.x >= rect.x && box.y >= rect.y && box.right() <= rect.br().x &&
                      box.bottom() <= rect.br().y;
  return inside && !cutBy(box, rect, picture, settings_.input);
}

bool RegionDetector::setAside(const Found& f, cv::Size picture) const {
  const double own = regionScale(ran_[f.region].rect, settings_.input);
  for (std::size_t i = 0; i < ran_.size(); ++i) {
    if (i == f.region || !heldWhole(f.detection.box, ran_[i].rect, picture)) continue;
    if (f.cut || regionScale(ran_[i].rect, settings_.input) > own * kSameScale) return true;
  }
  return false;
}

std::vector<Region> RegionDetector::edgeRegions(cv::Size picture) const {
  std::vector<Box> cut;
  for (const Found& f : found_) {
    if (!f.cut || f.detection.score < kEdgeScore) continue;
    const double own = regionScale(ran_[f.region].rect, settings_.input);
    // Seen whole elsewhere at least as finely, or large enough there anyway.
    const bool seenWhole = std::any_of(ran_.begin(), ran_.end(), [&](const Region& r) {
      const double scale = regionScale(r.rect, settings_.input);
      return (scale * kSameScale >= own ||
              f.detection.box.height * scale >= kComfortablePersonPixels) &&
             heldWhole(f.detection.box, r.rect, picture);
    });
    if (!seenWhole) cut.push_back(f.detection.box);
  }
  if (cut.empty()) return {};
  RegionSettings edge = settings_;
  edge.maxRegions = settings_.maxEdgeRegions;
  edge.wholeAbove = 1.0F;
  std::vector<Region> regions = planRegions(picture, {}, cut, false, edge);
  for (Region& r : regions) r.kind = RegionKind::kEdge;
  return regions;
}

Expected<void> RegionDetector::run(Detector& detector, cv::Size picture, const Pixels& pixels,
                                   const Region& region, StageTimings& timings,
                                   RegionCounts& counts) {
  const cv::Rect rect = region.rect & cv::Rect({}, picture);
  if (rect.empty()) return {};
  const double r = regionScale(rect, settings_.input);
  const cv::Size atLeast(static_cast<int>(std::ceil(rect.width * r - 1e-9)),
                         static_cast<int>(std::ceil(rect.height * r - 1e-9)));
  auto bgr = pixels(rect, atLeast);
  if (!bgr) return tl::unexpected(bgr.error());
  if (auto ok = detector.detect(*bgr, rect.size(), one_); !ok) return ok;
  timings.preprocessMs += one_.timings.preprocessMs;
  timings.inferenceMs += one_.timings.inferenceMs;
  timings.postprocessMs += one_.timings.postprocessMs;
  ++counts[static_cast<std::size_t>(region.kind)];
  const std::size_t index = ran_.size();
  ran_.push_back({rect, region.kind});
  for (Detection d : one_.detections) {
    d.box.x += static_cast<float>(rect.x);
    d.box.y += static_cast<float>(rect.y);
    found_.push_back({d, index, cutBy(d.box, rect, picture, settings_.input)});
  }
  return {};
}

Expected<void> RegionDetector::detect(Detector& detector, const cv::Mat& bgr,
                                      std::span<const Region> regions, DetectionResult& result,
                                      RegionCounts& counts) {
  if (bgr.empty() || bgr.type() != CV_8UC3) {
    result.detections.clear();
    return makeError(ErrorCode::kInvalidArgument, "expected a non-empty 8-bit BGR image");
  }
  return detect(
      detector, bgr.size(),
      [&bgr](const cv::Rect& rect, cv::Size) -> Expected<cv::Mat> { return bgr(rect); }, regions,
      result, counts);
}

Expected<void> RegionDetector::detect(Detector& detector, cv::Size picture, const Pixels& pixels,
                                      std::span<const Region> regions, DetectionResult& result,
                                      RegionCounts& counts) {
  result.detections.clear();
  result.width = picture.width;
  result.height = picture.height;
  result.timings = {};
  if (picture.empty()) return makeError(ErrorCode::kInvalidArgument, "an empty picture");
  settings_.input = cv::Size(detector.manifest().input.width, detector.manifest().input.height);
  ran_.clear();
  found_.clear();
  const Region whole{cv::Rect({}, picture), RegionKind::kWhole};
  for (const Region& region : regions.empty() ? std::span<const Region>(&whole, 1) : regions) {
    if (auto ok = run(detector, picture, pixels, region, result.timings, counts); !ok) return ok;
  }
  for (const Region& region : edgeRegions(picture)) {
    if (auto ok = run(detector, picture, pixels, region, result.timings, counts); !ok) return ok;
  }
  kept_.clear();
  for (const Found& f : found_) {
    if (!setAside(f, picture)) kept_.push_back(f.detection);
  }
  nonMaximumSuppression(kept_, detector.nmsIou(), detector.maxDetections(), order_,
                        result.detections);
  clipBoxes(result.detections, picture.width, picture.height);
  return {};
}

}  // namespace vigil
