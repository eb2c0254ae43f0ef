#pragma once

#include <functional>
#include <span>
#include <vector>

#include "detector/detector.h"
#include "detector/regions.h"

namespace vigil {

// One detection of a picture on regions (regions.h) instead of the whole picture shrunk: each
// region cut from the full-resolution picture (a view, no copy), detected on by the Detector
// (scaled into its input: on the NPU a square region is exactly its fixed input), its boxes
// moved back to the picture's pixels, and one class-aware NMS across all of them.
//
// Which region's word counts for a person: the finest region that holds the person's box
// whole. A box that touches an edge of its region that is not the picture's edge is cut (part
// of the person is outside); a box is set aside when another region holds it whole and that
// region either sees it at a finer scale or is not cut there. A person cut by every region that
// ran (standing across the edge of two) is detected again, once, on a region centred on the cut
// box (as Frigate does; at most settings.maxEdgeRegions of them, merged like the others), and is
// then judged by the same rule: counted once, not lost.
//
// Ownership and threads: borrows the Detector for the call; owns its scratch buffers, reused
// between calls. One thread at a time.
class RegionDetector {
 public:
  explicit RegionDetector(RegionSettings settings = {}) : settings_(settings) {}

  // Where a region's pixels come from: 8-bit BGR of exactly `rect` of the picture, at its full
  // resolution or smaller but at least `atLeast` (what the letterbox needs of it); boxes found
  // on it are scaled back to the rectangle. The daemon decodes each region on its own; a
  // picture in memory gives views of itself.
  using Pixels = std::function<Expected<cv::Mat>(const cv::Rect& rect, cv::Size atLeast)>;

  // A `picture`-sized picture, each region's pixels from `pixels`. `regions`: planRegions' (none:
  // the whole picture). `result` as Detector::detect's, the timings summed over the regions;
  // `counts` gains one per region run, by kind. A failure of any region is the detection's.
  Expected<void> detect(Detector& detector, cv::Size picture, const Pixels& pixels,
                        std::span<const Region> regions, DetectionResult& result,
                        RegionCounts& counts);
  // `bgr`: the whole picture at full resolution, 8-bit BGR, its regions views of it.
  Expected<void> detect(Detector& detector, const cv::Mat& bgr, std::span<const Region> regions,
                        DetectionResult& result, RegionCounts& counts);

  const RegionSettings& settings() const { return settings_; }

 private:
  struct Found {
    Detection detection;
    std::size_t region = 0;  // index into ran_
    bool cut = false;
  };
  Expected<void> run(Detector& detector, cv::Size picture, const Pixels& pixels,
                     const Region& region, StageTimings& timings, RegionCounts& counts);
  // Re-detection regions around the boxes every region cut.
  std::vector<Region> edgeRegions(cv::Size picture) const;
  bool heldWhole(const Box& box, const cv::Rect& rect, cv::Size picture) const;
  bool setAside(const Found& f, cv::Size picture) const;

  RegionSettings settings_;
  std::vector<Region> ran_;
  std::vector<Found> found_;
  DetectionResult one_;
  std::vector<Detection> kept_;
  std::vector<int> order_;
};

}  // namespace vigil
