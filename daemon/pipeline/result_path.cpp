#include "daemon/pipeline/result_path.h"

#include <algorithm>
#include <cmath>

#include "daemon/pipeline/motion.h"

namespace vigil {

namespace {

constexpr auto kRateWindow = std::chrono::seconds(2);

double secondsOfMs(double ms) { return ms / 1000.0; }

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

ResultPath::ResultPath(EventPublisher& publisher, StageHistograms stages)
    : publisher_(publisher), stages_(std::move(stages)) {}

const CameraView& ResultPath::addCamera(const std::string& name,
                                        std::shared_ptr<CameraChannel> channel,
                                        std::shared_ptr<Histogram> captureToPublish) {
  CameraView& view = views_[name];
  view = CameraView{};
  view.channel = std::move(channel);
  view.captureToPublish = std::move(captureToPublish);
  return view;
}

void ResultPath::removeCamera(const std::string& name) { views_.erase(name); }

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
  view.latency.add(std::chrono::duration<double, std::milli>(r.doneTime - r.captureTime).count());
  view.lastHadPerson = publish(r, view, received, now);
  const auto presence = publisher_.state(r.camera);
  if (presence && presence->present) {
    if (view.events.empty() || view.events.back().start != presence->start) {
      view.events.push_back({presence->start, presence->startSequence});
    }
  }
  tellGate(view, presence);
  // The price of a gated frame: what the detector spends per frame, recently.
  const double detectorSeconds =
      secondsOfMs(r.timings.preprocessMs + r.timings.inferenceMs + r.timings.postprocessMs);
  meanDetectorSeconds_ =
      meanDetectorSeconds_ == 0
          ? detectorSeconds
          : meanDetectorSeconds_ + 0.05 * (detectorSeconds - meanDetectorSeconds_);
  observeStages(r, view, received);
  // The status page's picture: copied into a reused buffer, encoded only when asked for.
  if (r.frame) {
    r.frame->image.copyTo(view.latest);
    view.latestDetections = r.detections;
    view.hasFrame = true;
  }
}

bool ResultPath::publish(const FrameResult& r, CameraView& view, SteadyClock::time_point received,
                         std::chrono::system_clock::time_point now) {
  ObservedFrame frame;
  frame.camera = r.camera;
  frame.sequence = r.sequence;
  frame.width = r.width;
  frame.height = r.height;
  frame.captureTime = now - std::chrono::duration_cast<std::chrono::system_clock::duration>(
                                received - r.captureTime);
  frame.detections = &r.detections;
  frame.backend = r.backend;
  frame.image = r.frame ? &r.frame->image : nullptr;
  publisher_.onFrame(frame, now);
  const bool hasPerson = std::any_of(r.detections.begin(), r.detections.end(),
                                     [](const Detection& d) { return d.classId == 0; });
  if (hasPerson) view.lastPerson = frame.captureTime;
  return hasPerson;
}

void ResultPath::observeStages(const FrameResult& r, CameraView& view,
                               SteadyClock::time_point received) {
  const auto published = SteadyClock::now();
  stages_.captureToStart->observe(
      std::chrono::duration<double>(r.startTime - r.captureTime).count());
  stages_.preprocess->observe(secondsOfMs(r.timings.preprocessMs));
  stages_.inference->observe(secondsOfMs(r.timings.inferenceMs));
  stages_.postprocess->observe(secondsOfMs(r.timings.postprocessMs));
  stages_.publish->observe(std::chrono::duration<double>(published - received).count());
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
    tellGate(view, publisher_.state(name));
    updateRates(view, now);
  }
}

void ResultPath::updateRates(CameraView& view, SteadyClock::time_point now) {
  const CameraCounters& c = view.channel->counters();
  if (view.rateSince == SteadyClock::time_point{}) {
    view.rateSince = now;
    view.capturedSince = c.captured.load();
    view.detectedSince = c.detected.load();
    return;
  }
  double dt = std::chrono::duration<double>(now - view.rateSince).count();
  if (dt < std::chrono::duration<double>(kRateWindow).count()) return;
  view.fpsCaptured = static_cast<double>(c.captured.load() - view.capturedSince) / dt;
  view.fpsDetected = static_cast<double>(c.detected.load() - view.detectedSince) / dt;
  view.rateSince = now;
  view.capturedSince = c.captured.load();
  view.detectedSince = c.detected.load();
}

void ResultPath::tellGate(CameraView& view, const std::optional<PresenceTracker::State>& presence) {
  MotionGate::Person person = MotionGate::Person::kNone;
  if (view.lastHadPerson) {
    person = MotionGate::Person::kSeen;
  } else if (presence && presence->present) {
    person = MotionGate::Person::kPresent;
  }
  view.channel->counters().person.store(static_cast<int>(person), std::memory_order_relaxed);
}

}  // namespace vigil
