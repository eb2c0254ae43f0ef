#include "daemon/events/event_snapshot.h"

#include <opencv2/imgcodecs.hpp>

#include "daemon/base/log.h"
#include "detector/annotate.h"

namespace vigil {

namespace {

constexpr int kSnapshotQuality = 85;

}  // namespace

void EventSnapshot::keep(const ObservedFrame& frame) {
  kept_.assign(*frame.picture);  // reuses the storage
  detectSize_ = cv::Size(frame.width, frame.height);
  persons_.clear();
  if (frame.detections != nullptr) {
    for (const Detection& d : *frame.detections) {
      if (d.classId == 0) persons_.push_back(d);
    }
  }
  keptId_ = frame.id;
}

bool EventSnapshot::encode(std::string_view camera) {
  std::vector<unsigned char> jpeg;
  auto pixels = kept_.bgr();
  if (!pixels) {
    logger("events")->warn("[cam={}] cannot decode the snapshot's frame: {}", camera,
                           pixels.error().message);
    return false;
  }
  try {
    cv::Mat drawn = pixels->clone();
    drawDetections(drawn, scaledTo(persons_, detectSize_, drawn.size()), {"person"});
    if (!cv::imencode(".jpg", drawn, jpeg, {cv::IMWRITE_JPEG_QUALITY, kSnapshotQuality})) {
      logger("events")->warn("[cam={}] cannot encode the snapshot", camera);
      return false;
    }
  } catch (const cv::Exception& e) {
    logger("events")->warn("[cam={}] cannot encode the snapshot: {}", camera, e.what());
    return false;
  }
  jpeg_.assign(jpeg.begin(), jpeg.end());
  publishedId_ = keptId_;
  return true;
}

}  // namespace vigil
