#pragma once

#include <cstdint>

#include "daemon/events/camera_view.h"
#include "daemon/pipeline/inference_worker.h"

namespace vigil {

// The picture people see of each camera's latest detected frame (CameraView::latest, kept as it
// arrived and decoded only when asked for): its picture stream's newest (picture_source) when
// that one fits the frame, else the frame itself; and the frame's version, new with every kept
// picture and never repeated across cameras and restarts (what the status page's encoded copy is
// keyed by).
//
// Threads: the control (io_context) thread only (ResultPath owns it and the views).
class LatestPictures {
 public:
  // Keeps the picture of `r` in view.latest, with its detected size and a new version; nullptr
  // (and the view untouched) when the result carries no frame.
  const CapturedPicture* keep(const FrameResult& r, CameraView& view);

 private:
  std::uint64_t frameVersions_ = 0;  // the last CameraView::frameVersion given, all cameras
};

}  // namespace vigil
