#include "daemon/publish/event_publisher.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>
#include <set>

#include "daemon/log.h"
#include "detector/annotate.h"

namespace vigil {

std::string isoUtc(std::chrono::system_clock::time_point time) {
  auto ms = std::chrono::floor<std::chrono::milliseconds>(time.time_since_epoch()).count();
  auto seconds = static_cast<std::time_t>(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
  auto millis = static_cast<int>(ms - static_cast<long long>(seconds) * 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
}

namespace {

constexpr int kSchema = 1;
constexpr int kSnapshotQuality = 85;

std::string_view typeName(PresenceEventType type) {
  switch (type) {
    case PresenceEventType::kNew:
      return "new";
    case PresenceEventType::kUpdate:
      return "update";
    case PresenceEventType::kEnd:
      return "end";
  }
  return "unknown";
}

// Scores and coordinates with 4 decimals: enough for a box on a 4K frame, and short.
double rounded(double value) { return std::round(value * 10000) / 10000; }

std::string eventJson(const std::string& camera, const PresenceEvent& e, std::string_view backend,
                      std::optional<double> latencyMs) {
  nlohmann::json boxes = nlohmann::json::array();
  for (const Detection& d : e.boxes) {
    boxes.push_back({{"x", rounded(d.box.x)},
                     {"y", rounded(d.box.y)},
                     {"w", rounded(d.box.width)},
                     {"h", rounded(d.box.height)},
                     {"score", rounded(d.score)}});
  }
  nlohmann::json j = {
      {"schema", kSchema},
      {"type", typeName(e.type)},
      {"camera", camera},
      {"zone", e.zone.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.zone)},
      {"event_id", e.eventId},
      {"start", isoUtc(e.start)},
      {"end", e.end ? nlohmann::json(isoUtc(*e.end)) : nlohmann::json(nullptr)},
      {"count", e.count},
      {"max_score", rounded(e.maxScore)},
      {"boxes", boxes},
      {"backend", backend.empty() ? nlohmann::json(nullptr) : nlohmann::json(backend)},
      {"latency_ms",
       latencyMs ? nlohmann::json(std::round(*latencyMs * 10) / 10) : nlohmann::json(nullptr)},
  };
  return j.dump();
}

}  // namespace

EventPublisher::EventPublisher(EventPublisherSettings settings, MessageSink* sink)
    : settings_(std::move(settings)), sink_(sink) {}

std::string EventPublisher::statusTopic() const {
  return vigil::statusTopic(settings_.topicPrefix);
}

std::string EventPublisher::homeAssistantStatusTopic() const {
  return settings_.haPrefix + "/status";
}

void EventPublisher::send(std::string topic, std::string payload, bool retained) {
  if (sink_ != nullptr) sink_->publish(std::move(topic), std::move(payload), retained);
}

DiscoverySettings EventPublisher::discoverySettings() const {
  return DiscoverySettings{settings_.haPrefix, settings_.topicPrefix, settings_.instance,
                           settings_.version, settings_.qos};
}

DiscoveredCamera EventPublisher::discovered(const CameraState& camera) const {
  DiscoveredCamera d{camera.spec.name, {}, settings_.snapshots};
  for (const ZoneSpec& zone : camera.spec.zones) d.zones.push_back(zone.name);
  return d;
}

EventPublisher::CameraState& EventPublisher::addCamera(const PublishedCamera& spec) {
  CameraState& camera = cameras_[spec.name];
  camera.spec = spec;
  camera.tracker =
      std::make_unique<PresenceTracker>(spec.name, spec.presence, spec.zones, spec.masks);
  return camera;
}

void EventPublisher::setCameras(const std::vector<PublishedCamera>& cameras) {
  const auto now = std::chrono::system_clock::now();
  std::set<std::string, std::less<>> wanted;
  for (const PublishedCamera& spec : cameras) wanted.insert(spec.name);

  // Removed cameras and zones leave no stale entity or retained state behind.
  for (auto it = cameras_.begin(); it != cameras_.end();) {
    CameraState& camera = it->second;
    auto next = std::find_if(cameras.begin(), cameras.end(),
                             [&](const PublishedCamera& c) { return c.name == it->first; });
    if (next != cameras.end() && *next == camera.spec) {
      ++it;
      continue;
    }
    endAll(camera, now);
    if (next == cameras.end() || next->zones != camera.spec.zones) clearCamera(camera);
    if (next == cameras.end()) {
      logger("events")->info("[cam={}] removed: its MQTT topics are cleared", it->first);
    }
    it = next == cameras.end() ? cameras_.erase(it) : ++it;
  }
  for (const PublishedCamera& spec : cameras) {
    auto it = cameras_.find(spec.name);
    if (it != cameras_.end() && it->second.spec == spec) continue;
    CameraState& camera = addCamera(spec);
    if (!announced_) continue;
    if (settings_.haDiscovery) {
      for (auto& m : discoveryMessages(discoverySettings(), discovered(camera))) {
        send(std::move(m.topic), std::move(m.payload), true);
      }
    }
    publishState(camera, "");
    for (const ZoneSpec& zone : camera.spec.zones) publishState(camera, zone.name);
  }
  if (!announced_) announce();
}

void EventPublisher::clearCamera(const CameraState& camera) {
  if (settings_.haDiscovery) {
    for (auto& m : discoveryRemovals(discoverySettings(), discovered(camera))) {
      send(std::move(m.topic), "", true);
    }
  }
  // An empty retained payload deletes the retained message.
  const std::string& prefix = settings_.topicPrefix;
  send(personTopic(prefix, camera.spec.name, ""), "", true);
  send(countTopic(prefix, camera.spec.name, ""), "", true);
  send(snapshotTopic(prefix, camera.spec.name), "", true);
  send(cameraStatusTopic(prefix, camera.spec.name), "", true);
  for (const ZoneSpec& zone : camera.spec.zones) {
    send(personTopic(prefix, camera.spec.name, zone.name), "", true);
    send(countTopic(prefix, camera.spec.name, zone.name), "", true);
  }
}

void EventPublisher::announce() {
  announced_ = true;
  send(statusTopic(), "online", true);
  if (!statusAttributes_.empty()) {
    send(statusAttributesTopic(settings_.topicPrefix), statusAttributes_, true);
  }
  if (settings_.haDiscovery) {
    for (const auto& [name, camera] : cameras_) {
      for (auto& m : discoveryMessages(discoverySettings(), discovered(camera))) {
        send(std::move(m.topic), std::move(m.payload), true);
      }
    }
  }
  for (const auto& [name, camera] : cameras_) {
    publishState(camera, "");
    for (const ZoneSpec& zone : camera.spec.zones) publishState(camera, zone.name);
    if (settings_.snapshots && !camera.snapshotJpeg.empty()) {
      send(snapshotTopic(settings_.topicPrefix, name), camera.snapshotJpeg, true);
    }
    if (camera.available) {
      send(cameraStatusTopic(settings_.topicPrefix, name), *camera.available ? "online" : "offline",
           true);
    }
  }
}

void EventPublisher::setStatusAttributes(std::string json) {
  if (json == statusAttributes_) return;
  statusAttributes_ = std::move(json);
  if (announced_) send(statusAttributesTopic(settings_.topicPrefix), statusAttributes_, true);
}

void EventPublisher::setCameraAvailable(std::string_view camera, bool available) {
  auto it = cameras_.find(camera);
  if (it == cameras_.end() || it->second.available == available) return;
  it->second.available = available;
  if (announced_) {
    send(cameraStatusTopic(settings_.topicPrefix, it->second.spec.name),
         available ? "online" : "offline", true);
  }
}

void EventPublisher::onHomeAssistantStatus(std::string_view payload) {
  if (payload != "online") return;
  logger("events")->info("Home Assistant is online: announcing the entities again");
  announce();
}

void EventPublisher::publishState(const CameraState& camera, const std::string& zone) {
  PresenceTracker::State state = camera.tracker->state(zone);
  const std::string& prefix = settings_.topicPrefix;
  send(personTopic(prefix, camera.spec.name, zone), state.present ? "ON" : "OFF", true);
  send(countTopic(prefix, camera.spec.name, zone), std::to_string(state.count), true);
}

void EventPublisher::onFrame(const ObservedFrame& frame, TimePoint now) {
  auto it = cameras_.find(frame.camera);
  if (it == cameras_.end()) return;  // a result of a camera removed meanwhile
  CameraState& camera = it->second;
  events_.clear();
  camera.tracker->observe(
      TrackedFrame{frame.captureTime, frame.sequence, frame.width, frame.height, frame.detections},
      events_);
  if (settings_.snapshots && frame.image != nullptr && !frame.image->empty() &&
      camera.tracker->bestFrame() == frame.sequence && camera.candidateSequence != frame.sequence) {
    frame.image->copyTo(camera.candidate);  // reuses the buffer
    if (frame.detections != nullptr) {
      std::vector<Detection> persons;
      for (const Detection& d : *frame.detections) {
        if (d.classId == 0) persons.push_back(d);
      }
      drawDetections(camera.candidate, persons, {"person"});
    }
    camera.candidateSequence = frame.sequence;
  }
  publishEvents(camera, &frame, now);
}

void EventPublisher::tick(TimePoint now) {
  for (auto& [name, camera] : cameras_) {
    events_.clear();
    camera.tracker->tick(now, events_);
    publishEvents(camera, nullptr, now);
  }
}

void EventPublisher::endAll(TimePoint now) {
  for (auto& [name, camera] : cameras_) endAll(camera, now);
}

void EventPublisher::endAll(CameraState& camera, TimePoint now) {
  events_.clear();
  camera.tracker->endAll(events_);
  publishEvents(camera, nullptr, now);
}

void EventPublisher::publishEvents(CameraState& camera, const ObservedFrame* frame, TimePoint now) {
  if (events_.empty()) return;
  auto log = logger("events");
  const std::string& name = camera.spec.name;
  for (const PresenceEvent& e : events_) {
    std::optional<double> latencyMs;
    if (frame != nullptr && e.type != PresenceEventType::kEnd) {
      latencyMs = std::chrono::duration<double, std::milli>(now - frame->captureTime).count();
    }
    const std::string& prefix = settings_.topicPrefix;
    if (e.type != PresenceEventType::kUpdate) {
      send(personTopic(prefix, name, e.zone), e.type == PresenceEventType::kNew ? "ON" : "OFF",
           true);
    }
    send(countTopic(prefix, name, e.zone), std::to_string(e.count), true);
    send(eventsTopic(prefix),
         eventJson(name, e, frame != nullptr ? frame->backend : std::string_view(), latencyMs),
         false);
    ++eventsPublished_;
    const std::string where = e.zone.empty() ? "" : fmt::format(" zone {}", e.zone);
    if (e.type == PresenceEventType::kUpdate) {
      log->debug("[cam={}]{} person update {}: {} person(s), max score {:.2f}", name, where,
                 e.eventId, e.count, e.maxScore);
    } else if (e.type == PresenceEventType::kNew) {
      log->info("[cam={}]{} person present ({}): {} person(s), score {:.2f}", name, where,
                e.eventId, e.count, e.maxScore);
    } else {
      log->info("[cam={}]{} person gone ({}), max score {:.2f}", name, where, e.eventId,
                e.maxScore);
    }
    if (e.zone.empty() && e.type != PresenceEventType::kEnd && settings_.snapshots &&
        camera.candidateSequence == e.bestFrame && camera.publishedSequence != e.bestFrame) {
      publishSnapshot(camera);
    }
  }
}

void EventPublisher::publishSnapshot(CameraState& camera) {
  std::vector<unsigned char> jpeg;
  try {
    if (!cv::imencode(".jpg", camera.candidate, jpeg,
                      {cv::IMWRITE_JPEG_QUALITY, kSnapshotQuality})) {
      logger("events")->warn("[cam={}] cannot encode the snapshot", camera.spec.name);
      return;
    }
  } catch (const cv::Exception& e) {
    logger("events")->warn("[cam={}] cannot encode the snapshot: {}", camera.spec.name, e.what());
    return;
  }
  camera.snapshotJpeg.assign(jpeg.begin(), jpeg.end());
  camera.publishedSequence = camera.candidateSequence;
  send(snapshotTopic(settings_.topicPrefix, camera.spec.name), camera.snapshotJpeg, true);
  ++snapshotsPublished_;
}

std::optional<PresenceTracker::State> EventPublisher::state(std::string_view camera,
                                                            std::string_view zone) const {
  auto it = cameras_.find(camera);
  if (it == cameras_.end()) return std::nullopt;
  return it->second.tracker->state(zone);
}

}  // namespace vigil
