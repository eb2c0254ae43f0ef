#include "daemon/events/latest_picture.h"

namespace vigil {

const CapturedPicture* LatestPictures::keep(const FrameResult& r, CameraView& view) {
  if (!r.frame) return nullptr;
  view.detectSize = cv::Size(r.width, r.height);
  view.latestFromPictureStream =
      view.pictures != nullptr && view.pictures->take(view.detectSize, r.captureTime, view.latest);
  if (!view.latestFromPictureStream) view.latest.assign(r.frame->picture);
  view.hasFrame = true;
  view.frameVersion = ++frameVersions_;
  return &view.latest;
}

}  // namespace vigil
