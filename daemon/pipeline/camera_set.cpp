#include "daemon/pipeline/camera_set.h"

#include <algorithm>

#include "daemon/base/log.h"
#include "daemon/base/url_credentials.h"
#include "daemon/pipeline/camera_feed.h"

namespace vigil {

namespace {

std::string motionSummary(const MotionSettings& motion) {
  if (!motion.enabled) return {};
  return fmt::format(", motion gating (idle after {} s: every {} s)",
                     std::chrono::duration<double>(motion.idleAfter).count(),
                     std::chrono::duration<double>(motion.idleDetectInterval).count());
}

}  // namespace

CameraSet::CameraSet(Scheduler& scheduler, Hooks hooks)
    : scheduler_(scheduler), hooks_(std::move(hooks)) {}

CameraSet::~CameraSet() { stopAll(); }

void CameraSet::start(const CameraConfig& c) {
  auto log = logger("daemon");
  if (!c.enabled) {
    log->info("[cam={}] disabled in the configuration", c.name);
    return;
  }
  auto feed = std::make_shared<CameraFeed>(c, scheduler_);
  CameraPtr camera(new Camera(c, feed));
  std::shared_ptr<PictureStream> pictures;
  CameraPtr pictureCamera;
  if (c.picture.enabled()) {
    pictures = std::make_shared<PictureStream>(c.name);
    pictureCamera.reset(new Camera(pictureCameraConfig(c), pictures));
  }
  hooks_.starting(c.name, *camera, feed->channel(), pictures);
  startAfterLeftBehind(*camera);
  log->info("[cam={}] started: {} source {}, detect {} fps{}", c.name, sourceKindName(c.kind),
            redactCredentials(c.location), c.detectFps, motionSummary(c.motion));
  cameras_[c.name] = std::move(camera);
  if (pictureCamera) {
    startAfterLeftBehind(*pictureCamera);
    log->info("[cam={}] pictures from {} source {} (decoded in full only while somebody watches)",
              c.name, sourceKindName(c.picture.kind), redactCredentials(c.picture.location));
    pictures_[c.name] = std::move(pictureCamera);
  }
}

void CameraSet::startAfterLeftBehind(Camera& camera) {
  std::shared_ptr<Camera::ThreadEnd> after;
  if (auto stuck = leftBehind_.find(camera.config().name); stuck != leftBehind_.end()) {
    after = std::move(stuck->second);
    leftBehind_.erase(stuck);
  }
  camera.start(std::move(after));
}

const Camera* CameraSet::pictureCamera(const std::string& name) const {
  auto it = pictures_.find(name);
  return it == pictures_.end() ? nullptr : it->second.get();
}

void CameraSet::requestStop(const std::string& name) {
  cameras_.at(name)->requestStop();
  if (auto it = pictures_.find(name); it != pictures_.end()) it->second->requestStop();
}

void CameraSet::stopBy(const std::string& name, SteadyClock::time_point deadline) {
  stopKeepingLeftBehind(*cameras_.at(name), deadline);
  if (auto it = pictures_.find(name); it != pictures_.end()) {
    stopKeepingLeftBehind(*it->second, deadline);
  }
}

void CameraSet::stopKeepingLeftBehind(Camera& camera, SteadyClock::time_point deadline) {
  if (!camera.stopBy(deadline)) leftBehind_[camera.config().name] = camera.threadLeftBehind();
}

CameraSet::Changes CameraSet::apply(const std::vector<CameraConfig>& next,
                                    const std::vector<CameraConfig>& running) {
  Changes changes;
  std::map<std::string, const CameraConfig*> wanted;
  for (const CameraConfig& c : next) wanted[c.name] = &c;
  auto goes = [&](const std::string& name, const Camera& camera) {
    auto w = wanted.find(name);
    return w == wanted.end() || !(*w->second == camera.config());
  };
  // The cameras that go wind down side by side: every one is asked first, then each joined.
  for (auto& [name, camera] : cameras_) {
    if (goes(name, *camera)) requestStop(name);
  }
  const auto deadline = SteadyClock::now() + kStopLimit;
  for (auto it = cameras_.begin(); it != cameras_.end();) {
    if (!goes(it->first, *it->second)) {
      ++it;
      continue;
    }
    const bool removedFromFile = wanted.count(it->first) == 0;
    stopBy(it->first, deadline);
    hooks_.removed(it->first);
    pictures_.erase(it->first);
    it = cameras_.erase(it);
    removedFromFile ? ++changes.removed : ++changes.restarted;
  }
  for (const CameraConfig& c : next) {
    if (cameras_.count(c.name) != 0) continue;
    const bool wasRunning = std::any_of(running.begin(), running.end(),
                                        [&](const CameraConfig& o) { return o.name == c.name; });
    start(c);
    if (!wasRunning) ++changes.added;
  }
  return changes;
}

void CameraSet::stopAll() {
  for (auto& [name, camera] : cameras_) requestStop(name);
  const auto deadline = SteadyClock::now() + kStopLimit;
  for (auto& [name, camera] : cameras_) stopBy(name, deadline);
}

}  // namespace vigil
