#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace vigil {

// A point in normalized frame coordinates: (0, 0) the top-left corner, (1, 1) the bottom-right.
struct Point {
  float x;
  float y;

  bool operator==(const Point&) const = default;
};

using Polygon = std::vector<Point>;

// Even-odd rule (ray casting), so concave and self-intersecting polygons work. A point exactly
// on an edge or a vertex may count as inside or outside: detections are never that precise,
// so zones should not depend on it. A polygon of fewer than three points contains nothing.
bool contains(const Polygon& polygon, Point point);

// Where a person stands, the point zones and masks test: the bottom centre of the part of the
// box inside the frame (left, top, right, bottom in fractions of the frame), kept half a pixel
// inside the frame's edges (`halfPixel` in fractions). One rule for presence and tracking, so a
// person a zone counts is a person tracking says is in it, at the frame's edges too.
Point standingPoint(float left, float top, float right, float bottom, Point halfPixel);

struct PresenceSettings {
  int minFrames = 2;      // consecutive frames with a person before `new`; values < 1 act as 1
  float minScore = 0.5F;  // a detection counts at score >= minScore
  // With tracking: a track counts once the median of its recent scores reaches this (0: off,
  // a track counts from its first detection at minScore). PersonTracks has the rule.
  float confirmScore = 0;
  float minArea = 0.0F;  // fraction of the frame area, 0..1; counts at area >= minArea
  std::chrono::milliseconds clearAfter{5000};      // without a person this long: `end`
  std::chrono::milliseconds updateInterval{1000};  // min gap from a new/update to the next update

  bool operator==(const PresenceSettings&) const = default;
};

// A named region of one camera. Names must be unique per camera and not empty (the config
// layer checks that); the name "camera" would make event ids look like the whole camera's.
struct ZoneSpec {
  ZoneSpec() = default;
  // Written as {name, polygon} where tracking's settings keep their defaults.
  ZoneSpec(std::string zoneName, Polygon zonePolygon, int zoneMinFrames = 1,
           std::optional<std::chrono::milliseconds> zoneLoiterAfter = std::nullopt)
      : name(std::move(zoneName)),
        polygon(std::move(zonePolygon)),
        minFrames(zoneMinFrames),
        loiterAfter(zoneLoiterAfter) {}

  std::string name;
  Polygon polygon;
  // Tracking (events/person_tracks.h): a track enters after this many consecutive detected
  // frames inside, and loiters once per visit when inside longer than loiterAfter.
  int minFrames = 1;
  std::optional<std::chrono::milliseconds> loiterAfter;

  bool operator==(const ZoneSpec&) const = default;
};

}  // namespace vigil
