#include "detector/regions.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace vigil {

namespace {

// A rectangle shaped like the input, at least its size, holding `need` (w x h) where the
// picture allows, centred on (cx, cy) and moved inside the picture.
cv::Rect inputShaped(double cx, double cy, double needWidth, double needHeight, cv::Size picture,
                     cv::Size input) {
  const double scale = std::max({1.0, needWidth / input.width, needHeight / input.height});
  const int width = std::min(picture.width, static_cast<int>(std::ceil(input.width * scale)));
  const int height = std::min(picture.height, static_cast<int>(std::ceil(input.height * scale)));
  const int x =
      std::clamp(static_cast<int>(std::lround(cx - width / 2.0)), 0, picture.width - width);
  const int y =
      std::clamp(static_cast<int>(std::lround(cy - height / 2.0)), 0, picture.height - height);
  return {x, y, width, height};
}

cv::Rect merged(const cv::Rect& a, const cv::Rect& b, cv::Size picture, cv::Size input) {
  const cv::Rect u = a | b;
  return inputShaped(u.x + u.width / 2.0, u.y + u.height / 2.0, u.width, u.height, picture, input);
}

double area(const cv::Rect& r) { return static_cast<double>(r.width) * r.height; }

RegionKind mergedKind(RegionKind a, RegionKind b) {
  return a == RegionKind::kTrack || b == RegionKind::kTrack ? RegionKind::kTrack : a;
}

// A region being planned, with the height of the smallest box it was made around (picture
// pixels): how far it may be shrunk.
struct Planned {
  Region region;
  double smallest = 0;
};

// A merged region larger than this many times the input's side shrinks its persons nearly as
// much as the whole picture does.
constexpr double kMostMerged = 2.0;
// How dear merging `a` and `b` into `m` is: 0 it costs no pixels (they overlap and `m` has no
// more than the two), 1 every box in them stays comfortably tall in `m` (one inference instead
// of two, nobody too small), 2 it shrinks somebody.
int mergeTier(const Planned& a, const Planned& b, const cv::Rect& m, cv::Size input) {
  const cv::Rect& ra = a.region.rect;
  const cv::Rect& rb = b.region.rect;
  if ((ra & rb).area() > 0 && area(m) <= area(ra) + area(rb)) return 0;
  const double side = std::max(static_cast<double>(m.width) / input.width,
                               static_cast<double>(m.height) / input.height);
  if (side <= kMostMerged &&
      std::min(a.smallest, b.smallest) * regionScale(m, input) >= kComfortablePersonPixels) {
    return 1;
  }
  return 2;
}

// One step of planning, in place: the cheapest merge (tier 0, then 1, the smallest merged
// rectangle first), and, while more than `cap` remain, the pair whose merged rectangle is
// smallest when it is at most kMostMerged times the input's side; else the last region (the
// lowest priority: a small motion box) is dropped. False when nothing changed.
bool mergeOnce(std::vector<Planned>& regions, std::size_t cap, cv::Size picture, cv::Size input) {
  std::size_t bestI = 0;
  std::size_t bestJ = 0;
  cv::Rect best;
  int bestTier = 3;
  double bestArea = std::numeric_limits<double>::max();
  for (std::size_t i = 0; i < regions.size(); ++i) {
    for (std::size_t j = i + 1; j < regions.size(); ++j) {
      const cv::Rect m = merged(regions[i].region.rect, regions[j].region.rect, picture, input);
      const int tier = mergeTier(regions[i], regions[j], m, input);
      if (tier < bestTier || (tier == bestTier && area(m) < bestArea)) {
        bestTier = tier;
        bestArea = area(m);
        best = m;
        bestI = i;
        bestJ = j;
      }
    }
  }
  if (bestTier > 1 && regions.size() <= cap) return false;
  if (bestTier > 1 && bestArea > kMostMerged * kMostMerged * area(cv::Rect({}, input))) {
    regions.pop_back();
    return true;
  }
  Planned& kept = regions[bestI];
  kept.region = {best, mergedKind(kept.region.kind, regions[bestJ].region.kind)};
  kept.smallest = std::min(kept.smallest, regions[bestJ].smallest);
  regions.erase(regions.begin() + static_cast<std::ptrdiff_t>(bestJ));
  return true;
}

}  // namespace

std::string_view regionKindName(RegionKind kind) {
  switch (kind) {
    case RegionKind::kMotion:
      return "motion";
    case RegionKind::kTrack:
      return "track";
    case RegionKind::kWhole:
      return "whole";
    case RegionKind::kEdge:
      return "edge";
  }
  return "unknown";
}

double regionScale(const cv::Rect& region, cv::Size input) {
  return std::min(static_cast<double>(input.width) / region.width,
                  static_cast<double>(input.height) / region.height);
}

bool regionsHelp(cv::Size picture, cv::Size input) {
  return std::max(picture.width, picture.height) >= 2 * std::max(input.width, input.height);
}

cv::Rect regionAround(const Box& box, cv::Size picture, const RegionSettings& settings) {
  const double grow = 1.0 + settings.margin;
  const double side = std::max(box.width, box.height) * grow;
  return inputShaped(box.x + box.width / 2.0, box.y + box.height / 2.0, side, side, picture,
                     settings.input);
}

std::vector<Region> planRegions(cv::Size picture, std::span<const Box> motion,
                                std::span<const Box> tracks, bool whole,
                                const RegionSettings& settings) {
  const Region wholePicture{cv::Rect(0, 0, picture.width, picture.height), RegionKind::kWhole};
  std::vector<Planned> planned;
  planned.reserve(tracks.size() + motion.size() + 1);
  auto add = [&](const Box& b, RegionKind kind) {
    if (b.area() > 0) planned.push_back({{regionAround(b, picture, settings), kind}, b.height});
  };
  for (const Box& b : tracks) add(b, RegionKind::kTrack);
  for (const Box& b : motion) add(b, RegionKind::kMotion);
  const std::size_t cap = static_cast<std::size_t>(std::max(1, settings.maxRegions));
  while (mergeOnce(planned, cap, picture, settings.input)) {
  }
  std::vector<Region> regions;
  regions.reserve(planned.size() + 1);
  for (const Planned& p : planned) regions.push_back(p.region);
  double covered = 0;
  for (const Region& r : regions) covered += area(r.rect);
  if (regions.empty() || covered > settings.wholeAbove * area(wholePicture.rect)) {
    return {wholePicture};
  }
  if (whole) regions.push_back(wholePicture);
  return regions;
}

std::vector<Region> RegionPlanner::plan(cv::Size picture, double time, std::span<const Box> motion,
                                        std::span<const Box> tracks) {
  const bool due =
      !lastWhole_ || time - *lastWhole_ >= settings_.wholeEvery - 1e-6 || time < *lastWhole_;
  std::vector<Region> regions = planRegions(picture, motion, tracks, due, settings_);
  for (const Region& r : regions) {
    if (r.kind == RegionKind::kWhole) lastWhole_ = time;
  }
  return regions;
}

}  // namespace vigil
