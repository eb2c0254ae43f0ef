#pragma once

#include <chrono>
#include <optional>
#include <vector>

#include "daemon/settings/zones.h"

namespace vigil {

// A camera's `motion:` section: when nothing moves and nobody is there, the detector runs
// this camera only now and then. cameras.yaml turns it on unless the section says
// `enabled: false` (config/camera_section.cpp); a CameraConfig built in code has it off.
struct MotionSettings {
  bool enabled = false;
  int threshold = 25;      // grey-level change (0..255) that makes a pixel "changed"
  float minArea = 0.005F;  // changed pixels, as a fraction of the unmasked frame, that are motion
  std::chrono::milliseconds idleAfter{5000};           // no motion this long: reduce the rate
  std::chrono::milliseconds idleDetectInterval{2000};  // no motion, nobody present
  // No motion, a person present (standing still): zero keeps the full detect_fps.
  std::chrono::milliseconds stillDetectInterval{0};
  // While idle, a source whose pictures depend on each other (H.264, H.265) decodes only its
  // keyframes (PictureSkipping): the motion check and the idle detections then happen at the
  // stream's keyframe interval, and in between only when the skipped packets' sizes show a
  // change; leaving idle decodes the pictures since the last keyframe at once (frames decoded
  // from missing references are never delivered). Off unless asked for: noise and a constant
  // bitrate hide the packets' growth, and motion is then noticed up to a GOP late.
  bool idleKeyframesOnly = false;
  // Regions whose changes are ignored (a TV, a tree). nullopt: the camera's own masks.
  std::optional<std::vector<Polygon>> masks;

  bool operator==(const MotionSettings&) const = default;
};

}  // namespace vigil
