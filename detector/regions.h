#pragma once

#include <array>
#include <cstdint>
#include <opencv2/core.hpp>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "detector/box.h"

namespace vigil {

// Where a region came from.
enum class RegionKind {
  kMotion,  // around a box of changed pixels the motion check found
  kTrack,   // around a tracked person's box (so a person who stops moving stays seen)
  kWhole,   // the whole picture, shrunk into the input as without regions
  kEdge,    // around a person cut by another region's edge, detected again whole
};
inline constexpr std::size_t kRegionKinds = 4;
std::string_view regionKindName(RegionKind kind);

// A rectangle of the camera's picture, in its pixels, detected on by itself: scaled into the
// model's input, its detections moved back to the picture's pixels.
struct Region {
  cv::Rect rect;
  RegionKind kind = RegionKind::kWhole;
};

// Regions run per kind, for the metrics and the status API.
using RegionCounts = std::array<std::uint64_t, kRegionKinds>;

struct RegionSettings {
  // Regions are squares of at least the model's input (a person in one is at the camera's own
  // resolution or shrunk less than in the whole picture), grown to hold their box with `margin`
  // (a fraction of the box's larger side, on both sides together).
  cv::Size input{416, 416};
  float margin = 0.5F;
  // At most this many regions per detection before the re-detections of cut persons (more are
  // merged, the nearest pairs first); at most `maxEdgeRegions` of those.
  int maxRegions = 3;
  int maxEdgeRegions = 1;
  // Regions covering more than this fraction of the picture: the whole picture instead (as
  // many pixels shrunk as much, for one inference).
  float wholeAbove = 0.6F;
  // Seconds between whole-picture passes while regions run (0: every detection).
  double wholeEvery = 1.0;
};

// A person at least this tall in the input is found about as well as a taller one: the TUD
// clips' smallest persons reach a 640x480 camera's input 39 pixels tall, and tracking there is
// as good on regions as on the clip itself (bench/far.md). Regions may be merged, and a cut
// person is seen whole, where nobody in them is shrunk below it.
inline constexpr double kComfortablePersonPixels = 36;

// Input pixels per picture pixel when `region` is letterboxed into `input`.
double regionScale(const cv::Rect& region, cv::Size input);

// Whether regions are worth having for a picture of `picture` pixels: its longer side is at
// least twice the input's. Smaller pictures reach the detector nearly at their own size.
bool regionsHelp(cv::Size picture, cv::Size input);

// The square region of side at least `settings.input` around `box` (grown by the margin), inside
// the picture; as large as the picture's shorter side allows.
cv::Rect regionAround(const Box& box, cv::Size picture, const RegionSettings& settings);

// The regions for one detection, in the picture's pixels: one around each track box and motion
// box, overlapping ones merged when the merged square has no more pixels than the two (so a
// person is not shrunk for nothing), then the nearest merged until at most maxRegions remain.
// Empty (nothing moves, nobody tracked) or covering more than wholeAbove: the whole picture
// alone. `whole`: add the whole picture besides (the periodic pass).
std::vector<Region> planRegions(cv::Size picture, std::span<const Box> motion,
                                std::span<const Box> tracks, bool whole,
                                const RegionSettings& settings);

// One camera's plan over time: the whole picture at most every settings.wholeEvery seconds
// besides the regions (a person who appeared where the motion check saw nothing, under a mask,
// is found within that time, and a false box of the shrunk picture gets a region of its own to
// be judged at full resolution on the next detection). One thread (the detector's).
class RegionPlanner {
 public:
  explicit RegionPlanner(RegionSettings settings = {}) : settings_(settings) {}

  const RegionSettings& settings() const { return settings_; }
  void setInput(cv::Size input) { settings_.input = input; }

  // `time`: seconds, increasing.
  std::vector<Region> plan(cv::Size picture, double time, std::span<const Box> motion,
                           std::span<const Box> tracks);

 private:
  RegionSettings settings_;
  std::optional<double> lastWhole_;
};

}  // namespace vigil
