#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>
#include <vector>

#include "daemon/capture/picture/captured_picture.h"
#include "daemon/events/person_tracks.h"
#include "detector/box.h"

namespace vigil {

// One frame's detections, as the inference worker produced them. Everything is borrowed for
// the onFrame() call.
struct ObservedFrame {
  std::string_view camera;
  std::uint64_t sequence = 0;  // the source's frame counter
  std::uint64_t id = 0;        // Frame::id: only grows for a camera
  int width = 0;
  int height = 0;
  std::chrono::system_clock::time_point captureTime;       // wall-clock time of the capture
  std::chrono::steady_clock::time_point captureMonotonic;  // the same on the monotonic clock
  const std::vector<Detection>* detections = nullptr;      // pixels; nullptr: none
  std::string_view backend;                                // which backend produced them
  // The frame for snapshots (decoded only when one is published); nullptr: none.
  const CapturedPicture* picture = nullptr;
  // A tracked camera: its tracked persons after this frame (pixels; first seen in Unix seconds),
  // who count for presence instead of the detections, and the frame's zone events. nullptr:
  // the camera is not tracked.
  const std::vector<TrackedPerson>* persons = nullptr;
  const std::vector<ZoneEvent>* zoneEvents = nullptr;
  // A tracked camera's line crossings on this frame; nullptr: none.
  const std::vector<LineCrossingEvent>* crossings = nullptr;
};

}  // namespace vigil
