#include "daemon/events/event_snapshot.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <ctime>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "daemon/base/log.h"
#include "detector/annotate.h"

namespace vigil {

namespace {

constexpr int kSnapshotQuality = 85;

// "door  2026-12-07 11:40:01" in the box's local time: what a phone notification shows.
std::string caption(std::string_view camera, std::chrono::system_clock::time_point time) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(time);
  std::tm tm{};
  localtime_r(&seconds, &tm);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
  return fmt::format("{}  {}", camera, when);
}

// White text on a dark band in the top-left, in the boxes' labels' style (labelStyle: sized to
// the picture, readable in a phone's notification).
struct Caption {
  LabelStyle style;
  cv::Point origin;  // of the text
  cv::Rect band;
};

Caption captionBand(cv::Size picture, const std::string& text) {
  Caption c;
  c.style = labelStyle(picture);
  int baseline = 0;
  const cv::Size size = cv::getTextSize(text, cv::FONT_HERSHEY_SIMPLEX, c.style.fontScale,
                                        c.style.textThickness, &baseline);
  const int pad = c.style.pad;
  c.origin = cv::Point(pad, pad + size.height);
  c.band = cv::Rect(0, 0, std::min(picture.width, size.width + 2 * pad),
                    std::min(picture.height, size.height + baseline + 2 * pad));
  return c;
}

void writeCaption(cv::Mat& picture, const Caption& c, const std::string& text) {
  picture(c.band) *= 0.35;
  cv::putText(picture, text, c.origin, cv::FONT_HERSHEY_SIMPLEX, c.style.fontScale,
              cv::Scalar(255, 255, 255), c.style.textThickness, cv::LINE_AA);
}

}  // namespace

void EventSnapshot::keep(const ObservedFrame& frame) {
  kept_.assign(*frame.picture);  // reuses the storage
  detectSize_ = cv::Size(frame.width, frame.height);
  captureTime_ = frame.captureTime;
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
    const std::string text = caption(camera, captureTime_);
    const Caption band = captionBand(drawn.size(), text);
    // The boxes' labels below the caption's band, not hidden under it.
    drawDetections(drawn, scaledTo(persons_, detectSize_, drawn.size()), {"person"},
                   band.band.height);
    writeCaption(drawn, band, text);
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
