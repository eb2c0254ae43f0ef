#include "daemon/events/result_path.h"

#include <algorithm>
#include <cmath>

#include "daemon/base/log.h"
#include "daemon/pipeline/detection_feedback.h"
#include "daemon/pipeline/motion.h"

namespace vigil {

namespace {

// How much longer than its lost time a tracked camera may go without a result before its tracks
// end by time: more than a slow detector's capture-to-result latency.
constexpr auto kNoFrameGrace = std::chrono::seconds(2);

template <typename Clock>
double secondsSinceEpoch(std::chrono::time_point<Clock> t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

// What the result path tells a camera's pipeline goes through the interface the pipeline owns
// (DetectionFeedback), whichever channel implements it.
DetectionFeedback& toldPipeline(CameraView& view) { return *view.channel; }

}  // namespace

namespace {

// The nearest-rank percentile of ascending, non-empty `sorted`.
double nearestRank(const std::vector<double>& sorted, double p) {
  auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace

double LatencyWindow::percentile(double p) const {
  if (ms_.empty()) return 0;
  std::vector<double> sorted = ms_;
  std::sort(sorted.begin(), sorted.end());
  return nearestRank(sorted, p);
}

LatencySummary LatencyWindow::summary() const {
  if (ms_.empty()) return {};
  std::vector<double> sorted = ms_;
  std::sort(sorted.begin(), sorted.end());
  return {nearestRank(sorted, 0.5), nearestRank(sorted, 0.99), sorted.size()};
}

std::unique_ptr<PersonTracks> personTracksFor(const CameraConfig& camera) {
  if (!camera.tracking.enabled) return nullptr;
  std::vector<TrackZone> zones;
  for (const ZoneSpec& z : camera.zones) {
    std::optional<double> loiter;
    if (z.loiterAfter) loiter = std::chrono::duration<double>(*z.loiterAfter).count();
    zones.push_back(TrackZone{z.name, z.polygon, z.minFrames, loiter});
  }
  return std::make_unique<PersonTracks>(personTrackingSettings(camera.tracking, camera.presence),
                                        std::move(zones), camera.masks, camera.lines);
}

ResultPath::ResultPath(EventPublisher& publisher, StageHistogramsFor stages, float reportedScore)
    : publisher_(publisher), stages_(std::move(stages)), reportedScore_(reportedScore) {}

const CameraView& ResultPath::addCamera(const std::string& name,
                                        std::shared_ptr<CameraChannel> channel,
                                        CameraHistograms histograms,
                                        std::unique_ptr<PersonTracks> tracks,
                                        std::shared_ptr<PictureStream> pictures) {
  removeCamera(name);  // a restart: the old tracks leave their zones first
  CameraView& view = views_[name];
  view.channel = std::move(channel);
  view.pictures = std::move(pictures);
  view.captureToPublish = std::move(histograms.captureToPublish);
  view.trackDuration = std::move(histograms.trackDuration);
  view.tracks = std::move(tracks);
  return view;
}

void ResultPath::removeCamera(const std::string& name) {
  auto it = views_.find(name);
  if (it == views_.end()) return;
  endTracks(it->first, it->second);
  views_.erase(it);
}

const CameraView* ResultPath::view(const std::string& name) const {
  auto it = views_.find(name);
  return it == views_.end() ? nullptr : &it->second;
}

void ResultPath::onResult(const FrameResult& r) {
  auto it = views_.find(r.camera);
  if (it == views_.end()) return;
  CameraView& view = it->second;
  const auto received = SteadyClock::now();
  const auto now = std::chrono::system_clock::now();
  const auto capture = now - std::chrono::duration_cast<std::chrono::system_clock::duration>(
                                 received - r.captureTime);
  view.latency.add(std::chrono::duration<double, std::milli>(r.doneTime - r.captureTime).count());
  track(r, view, capture);
  const CapturedPicture* picture = pictures_.keep(r, view);
  view.lastHadPerson = publish(r, view, picture, capture, now);
  if (view.pictures && view.lastHadPerson) view.pictures->personInView(received);
  const auto presence = publisher_.state(r.camera);
  if (keepEventStarts_ && presence && presence->present) {
    if (view.events.empty() || view.events.back().start != presence->start) {
      view.events.push_back({presence->start, presence->startSequence});
    }
  }
  tellPerson(view, presence);
  rates_.detectorRan(r.timings);
  stages_.observe(r, received, view.captureToPublish.get());
}

void ResultPath::track(const FrameResult& r, CameraView& view,
                       std::chrono::system_clock::time_point capture) {
  view.latestDetections.clear();
  persons_.clear();
  for (const Detection& d : r.detections) {
    if (d.score >= reportedScore_) view.latestDetections.push_back(d);
    if (d.classId == 0) persons_.push_back(d);
  }
  zoneEvents_.clear();
  if (!view.tracks) {
    toldPipeline(view).tellPersons(view.latestDetections);
    return;
  }
  // Never before the last update (a tick may have expired tracks after this frame's capture).
  const double time = std::max(secondsSinceEpoch(r.captureTime), view.trackedAt);
  view.tracks->update(time, r.width, r.height, persons_, zoneEvents_);
  tracksUpdated(view, time, secondsSinceEpoch(capture));
  toldPipeline(view).tellTracks(view.tracks->tracks());
  if (recorder_ != nullptr) recorder_->record(r.camera, r.sequence, view.tracks->persons());
}

void ResultPath::tracksUpdated(CameraView& view, double time, double wall) {
  view.trackedAt = time;
  observeTrackDurations(view);
  // The tracker runs on the steady clock; what is published says wall-clock times.
  view.latestTracks = view.tracks->persons();
  for (TrackedPerson& p : view.latestTracks) {
    p.firstSeen = wall - (time - p.firstSeen);
    p.lastSeen = wall - (time - p.lastSeen);
  }
}

// No frame for longer than the lost time and kNoFrameGrace (the camera is lost, its file ended):
// its tracks end without one. The grace keeps a slow detector's frame in flight from ending
// tracks it would have kept.
void ResultPath::expireTracks(const std::string& name, CameraView& view,
                              SteadyClock::time_point now) {
  const double time = secondsSinceEpoch(now);
  if (!view.tracks || view.latestTracks.empty() ||
      time - view.trackedAt <=
          view.tracks->lostAfterSeconds() + std::chrono::duration<double>(kNoFrameGrace).count()) {
    return;
  }
  const std::vector<TrackedPerson> before = view.latestTracks;  // the leaving ones' boxes
  const auto wall = std::chrono::system_clock::now();
  zoneEvents_.clear();
  view.tracks->expire(time, zoneEvents_);
  tracksUpdated(view, time, secondsSinceEpoch(wall));
  publisher_.onZoneEvents(name, zoneEvents_, before, wall);
}

void ResultPath::endTracks() {
  for (auto& [name, view] : views_) endTracks(name, view);
}

void ResultPath::endTracks(const std::string& name, CameraView& view) {
  if (!view.tracks) return;
  zoneEvents_.clear();
  view.tracks->endAll(secondsSinceEpoch(SteadyClock::now()), zoneEvents_);
  observeTrackDurations(view);
  publisher_.onZoneEvents(name, zoneEvents_, view.latestTracks, std::chrono::system_clock::now());
  view.latestTracks.clear();
  view.tracks.reset();
}

void ResultPath::observeTrackDurations(const CameraView& view) {
  if (!view.trackDuration) return;
  for (double seconds : view.tracks->endedDurations()) view.trackDuration->observe(seconds);
}

bool ResultPath::publish(const FrameResult& r, CameraView& view, const CapturedPicture* picture,
                         std::chrono::system_clock::time_point capture,
                         std::chrono::system_clock::time_point now) {
  ObservedFrame frame;
  frame.camera = r.camera;
  frame.sequence = r.sequence;
  frame.id = r.frameId;
  frame.width = r.width;
  frame.height = r.height;
  frame.captureTime = capture;
  frame.captureMonotonic = r.captureTime;
  frame.detections = &view.latestDetections;
  if (view.tracks) {
    frame.persons = &view.latestTracks;
    frame.zoneEvents = &zoneEvents_;
    frame.crossings = &view.tracks->crossings();
  }
  frame.backend = r.backend;
  frame.picture = picture;
  publisher_.onFrame(frame, now);
  const bool hasPerson = std::any_of(view.latestDetections.begin(), view.latestDetections.end(),
                                     [](const Detection& d) { return d.classId == 0; });
  if (hasPerson) view.lastPerson = capture;
  return hasPerson;
}

void ResultPath::tick(SteadyClock::time_point now) {
  for (auto& [name, view] : views_) {
    rates_.priceGated(view);
    // An event ends by time (clear_after) as well as by frames: tell the gate here too.
    tellPerson(view, publisher_.state(name));
    CameraRates::update(view, now);
    expireTracks(name, view, now);
  }
}

void ResultPath::tellPerson(CameraView& view,
                            const std::optional<PresenceTracker::State>& presence) {
  using Person = DetectionFeedback::Person;
  Person person = Person::kNone;
  if (view.lastHadPerson) {
    person = Person::kSeen;
  } else if (presence && presence->present) {
    person = Person::kPresent;
  }
  toldPipeline(view).tellPerson(person);
}

}  // namespace vigil
