#include "daemon/capture/camera/picture_stream.h"

#include <fmt/format.h>

#include "daemon/base/log.h"

namespace vigil {

CameraConfig pictureCameraConfig(const CameraConfig& camera) {
  CameraConfig c = camera;
  c.name = camera.name + "/picture";
  c.source = camera.picture.source;
  c.kind = camera.picture.kind;
  c.location = camera.picture.location;
  c.width = camera.picture.width;
  c.height = camera.picture.height;
  c.format = PixelFormatChoice::kAuto;
  c.fpsSet = false;  // a V4L2 device: the lowest rate it offers at or above detect_fps
  c.motion = {};
  c.calibrationSamples = {};
  c.picture = {};
  c.picturesOnly = true;
  return c;
}

PictureStream::PictureStream(std::string camera) : camera_(std::move(camera)) {}

void PictureStream::detach() {
  std::lock_guard lock(mutex_);
  latest_.reset();
}

void PictureStream::offer(FrameHandle frame) {
  std::optional<FrameHandle> previous;  // back to the pool outside the lock
  std::lock_guard lock(mutex_);
  previous = std::exchange(latest_, std::move(frame));
}

bool PictureStream::keyframesOnly() const {
  return SteadyClock::now().time_since_epoch().count() >= wantedUntil_.load();
}

void PictureStream::want(SteadyClock::time_point now) {
  wantedUntil_.store((now + kWantedFor).time_since_epoch().count());
}

bool PictureStream::take(cv::Size detectSize, SteadyClock::time_point detected,
                         CapturedPicture& into) {
  if (!counters_.up.load()) return false;
  std::lock_guard lock(mutex_);
  if (!latest_) return false;
  const auto apart = (*latest_)->captureTime - detected;
  if (apart > kMaxApart || apart < -kMaxApart) return false;
  const cv::Size size = (*latest_)->picture.size();
  if (!sameAspectRatio(size.width, size.height, detectSize.width, detectSize.height)) {
    if (refused_.empty()) {
      refused_ = fmt::format(
          "its {}x{} pictures and the {}x{} detect stream differ in aspect ratio: the detected "
          "frames are shown instead",
          size.width, size.height, detectSize.width, detectSize.height);
      logger("daemon")->warn("[cam={}] picture_source: {}", camera_, refused_);
    }
    return false;
  }
  refused_.clear();
  into.assign((*latest_)->picture);
  return true;
}

std::string PictureStream::refused() const {
  std::lock_guard lock(mutex_);
  return refused_;
}

cv::Size PictureStream::size() const {
  std::lock_guard lock(mutex_);
  return latest_ ? (*latest_)->picture.size() : cv::Size();
}

namespace {

constexpr FigureName kPictureStreamUp{
    "picture_stream_up", "vigil_camera_picture_stream_up",
    "1 while the camera's picture stream (picture_source) delivers pictures; 0 while it is lost "
    "(detection goes on, the page shows the detected frames); absent without one"};

}  // namespace

void PictureStream::report(FigureWriter& out) const {
  out.level(kPictureStreamUp, {}, counters_.up.load() ? 1 : 0);
}

}  // namespace vigil
