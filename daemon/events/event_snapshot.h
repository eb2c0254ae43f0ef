#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/capture/picture/captured_picture.h"
#include "daemon/events/observed_frame.h"
#include "detector/box.h"

namespace vigil {

// The best frame of a camera's open presence event (or of its streak towards one), kept as it
// arrived (storage reused) with its persons, and decoded, drawn on and encoded as a JPEG only
// when the event publishes it: the snapshot of the events list, and of MQTT with snapshots on.
// Threads: the control thread.
class EventSnapshot {
 public:
  // Keeps the frame's picture and the persons among its detections, found on a frame of its
  // width and height: drawn scaled when the picture is a picture stream's, larger.
  void keep(const ObservedFrame& frame);
  bool holds(std::uint64_t id) const { return keptId_ == id; }
  // The kept frame is the event's best one (`bestFrame`) and its JPEG was not made yet.
  bool due(std::uint64_t bestFrame) const {
    return keptId_ == bestFrame && publishedId_ != bestFrame;
  }
  // Draws the persons on the kept frame, writes the camera's name and the capture time (the
  // box's local time, with the date) in its top left corner and encodes it: jpeg() from then
  // on. False, and a warning naming `camera`, when the frame cannot be decoded or encoded.
  bool encode(std::string_view camera);
  // The last JPEG made; empty before the first.
  const std::string& jpeg() const { return jpeg_; }

 private:
  CapturedPicture kept_;
  std::vector<Detection> persons_;
  cv::Size detectSize_;
  std::chrono::system_clock::time_point captureTime_;
  std::optional<std::uint64_t> keptId_;       // Frame::id of `kept_`
  std::optional<std::uint64_t> publishedId_;  // its JPEG made already
  std::string jpeg_;
};

}  // namespace vigil
