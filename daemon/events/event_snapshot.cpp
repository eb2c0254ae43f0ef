#include "daemon/events/event_snapshot.h"

#include <opencv2/imgcodecs.hpp>

#include "daemon/base/log.h"
#include "detector/annotate.h"

namespace vigil {

namespace {

constexpr int kSnapshotQuality = 85;

}  // namespace

void EventSnapshot::keep(const CapturedPicture& picture, const std::vector<Detection>* detections,
                         std::uint64_t id) {
  kept_.assign(picture);  // reuses the storage
  persons_.clear();
  if (detections != nullptr) {
    for (const Detection& d : *detections) {
      if (d.classId == 0) persons_.push_back(d);
    }
  }
  keptId_ = id;
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
    drawDetections(drawn, persons_, {"person"});
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
