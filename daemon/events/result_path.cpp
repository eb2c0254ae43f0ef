#include "daemon/events/result_path.h"

#include <algorithm>
#include <cmath>

#include "daemon/base/log.h"
#include "daemon/pipeline/motion.h"

namespace vigil {

namespace {

constexpr auto kRateWindow = std::chrono::seconds(2);
// How much longer than its lost time a tracked camera may go without a result before its tracks
// end by time: more than a slow detector's capture-to-result latency.
constexpr auto kNoFrameGrace = std::chrono::seconds(2);

double secondsOfMs(double ms) { return ms / 1000.0; }

template <typename Clock>
double secondsSinceEpoch(std::chrono::time_point<Clock> t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

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
    : publisher_(publisher), stagesFor_(std::move(stages)), reportedScore_(reportedScore) {}

const CameraView& ResultPath::addCamera(const std::string& name,
                                        std::shared_ptr<CameraChannel> channel,
                                        CameraHistograms histograms,
                                        std::unique_ptr<PersonTracks> tracks,
                                        std::shared_ptr<PictureStream> pictures) {
  removeCamera(name);  // a restart: the old tracks leave their zones first
  CameraView& view = views_[name];
  view.feedback = channel.get();
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
  const CapturedPicture* picture = keepPicture(r, view);
  view.lastHadPerson = publish(r, view, picture, capture, now);
  if (view.pictures && view.lastHadPerson) view.pictures->personInView(received);
  const auto presence = publisher_.state(r.camera);
  if (keepEventStarts_ && presence && presence->present) {
    if (view.events.empty() || view.events.back().start != presence->start) {
      view.events.push_back({presence->start, presence->startSequence});
    }
  }
  tellPerson(view, presence);
  // The price of a gated frame: what the detector spends per frame, recently.
  const double detectorSeconds =
      secondsOfMs(r.timings.preprocessMs + r.timings.inferenceMs + r.timings.postprocessMs);
  meanDetectorSeconds_ =
      meanDetectorSeconds_ == 0
          ? detectorSeconds
          : meanDetectorSeconds_ + 0.05 * (detectorSeconds - meanDetectorSeconds_);
  observeStages(r, view, received);
}

const CapturedPicture* ResultPath::keepPicture(const FrameResult& r, CameraView& view) {
  if (!r.frame) return nullptr;
  view.detectSize = cv::Size(r.width, r.height);
  view.latestFromPictureStream =
      view.pictures != nullptr && view.pictures->take(view.detectSize, r.captureTime, view.latest);
  if (!view.latestFromPictureStream) view.latest.assign(r.frame->picture);
  view.hasFrame = true;
  view.frameVersion = ++frameVersions_;
  return &view.latest;
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
    view.feedback->tellPersons(view.latestDetections);
    return;
  }
  // Never before the last update (a tick may have expired tracks after this frame's capture).
  const double time = std::max(secondsSinceEpoch(r.captureTime), view.trackedAt);
  view.tracks->update(time, r.width, r.height, persons_, zoneEvents_);
  tracksUpdated(view, time, secondsSinceEpoch(capture));
  view.feedback->tellTracks(view.tracks->tracks());
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

void ResultPath::observeStages(const FrameResult& r, CameraView& view,
                               SteadyClock::time_point received) {
  const auto published = SteadyClock::now();
  auto it = stages_.find(r.backend);
  if (it == stages_.end()) it = stages_.emplace(r.backend, stagesFor_(r.backend)).first;
  const StageHistograms& stages = it->second;
  stages.captureToStart->observe(
      std::chrono::duration<double>(r.startTime - r.captureTime).count());
  stages.preprocess->observe(secondsOfMs(r.timings.preprocessMs));
  stages.inference->observe(secondsOfMs(r.timings.inferenceMs));
  stages.postprocess->observe(secondsOfMs(r.timings.postprocessMs));
  stages.publish->observe(std::chrono::duration<double>(published - received).count());
  if (view.captureToPublish) {
    view.captureToPublish->observe(
        std::chrono::duration<double>(published - r.captureTime).count());
  }
}

void ResultPath::tick(SteadyClock::time_point now) {
  for (auto& [name, view] : views_) {
    const std::uint64_t gated = view.channel->counters().gated.load();
    view.gatedSeconds += static_cast<double>(gated - view.gatedPriced) * meanDetectorSeconds_;
    view.gatedPriced = gated;
    // An event ends by time (clear_after) as well as by frames: tell the gate here too.
    tellPerson(view, publisher_.state(name));
    updateRates(view, now);
    expireTracks(name, view, now);
  }
}

void ResultPath::updateRates(CameraView& view, SteadyClock::time_point now) {
  const CameraCounters& c = view.channel->counters();
  if (view.rateSince == SteadyClock::time_point{}) {
    view.rateSince = now;
    view.capturedSince = c.captured.load();
    view.detectedSince = c.detected.load();
    view.captureCpuSince = c.captureCpuSeconds();
    return;
  }
  double dt = std::chrono::duration<double>(now - view.rateSince).count();
  if (dt < std::chrono::duration<double>(kRateWindow).count()) return;
  view.fpsCaptured = static_cast<double>(c.captured.load() - view.capturedSince) / dt;
  view.fpsDetected = static_cast<double>(c.detected.load() - view.detectedSince) / dt;
  const double cpu = c.captureCpuSeconds();
  view.captureCpuShare = (cpu - view.captureCpuSince) / dt;
  view.captureCpuSince = cpu;
  view.rateSince = now;
  view.capturedSince = c.captured.load();
  view.detectedSince = c.detected.load();
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
  view.feedback->tellPerson(person);
}

}  // namespace vigil
