#include "daemon/events/event_publisher.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "daemon/base/log.h"
#include "daemon/events/camera_topics.h"
#include "daemon/events/event_json.h"

namespace vigil {

namespace {

// One line per presence event: new and end at info, updates at debug.
void logPresenceEvent(const std::string& name, const PresenceEvent& e) {
  auto log = logger("events");
  const std::string where = e.zone.empty() ? "" : fmt::format(" zone {}", e.zone);
  if (e.type == PresenceEventType::kUpdate) {
    log->debug("[cam={}]{} person update {}: {} person(s), max score {:.2f}", name, where,
               e.eventId, e.count, e.maxScore);
  } else if (e.type == PresenceEventType::kNew) {
    log->info("[cam={}]{} person present ({}): {} person(s), score {:.2f}", name, where, e.eventId,
              e.count, e.maxScore);
  } else {
    log->info("[cam={}]{} person gone ({}), max score {:.2f}", name, where, e.eventId, e.maxScore);
  }
}

// What Home Assistant's discovery messages say of this publisher.
DiscoverySettings discoverySettingsOf(const EventPublisherSettings& s) {
  return DiscoverySettings{s.haPrefix, s.topicPrefix, s.instance,
                           s.version,  s.qos,         s.configurationUrl};
}

}  // namespace

EventPublisher::EventPublisher(EventPublisherSettings settings, MessageSink* sink)
    : settings_(std::move(settings)),
      sink_(sink),
      track_(settings_.topicPrefix, sink, settings_.lineCountsFile) {}

std::string EventPublisher::statusTopic() const {
  return vigil::statusTopic(settings_.topicPrefix);
}

std::string EventPublisher::homeAssistantStatusTopic() const {
  return settings_.haPrefix + "/status";
}

void EventPublisher::send(std::string topic, std::string payload, bool retained) {
  if (sink_ != nullptr) sink_->publish(std::move(topic), std::move(payload), retained);
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
  track_.configureLines(cameras);
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
    if (next == cameras.end() || next->zones != camera.spec.zones ||
        next->lines != camera.spec.lines) {
      clearCamera(camera);
    }
    if (next == cameras.end()) {
      logger("events")->info("[cam={}] removed: its MQTT topics are cleared", it->first);
    }
    if (next == cameras.end()) track_.forget(it->first);
    it = next == cameras.end() ? cameras_.erase(it) : ++it;
  }
  for (const PublishedCamera& spec : cameras) {
    auto it = cameras_.find(spec.name);
    if (it != cameras_.end() && it->second.spec == spec) continue;
    CameraState& camera = addCamera(spec);
    if (!announced_) continue;
    if (settings_.haDiscovery) publishDiscovery(camera);
    publishState(camera, "");
    for (const ZoneSpec& zone : camera.spec.zones) publishState(camera, zone.name);
  }
  if (!announced_) announce();
}

void EventPublisher::publishDiscovery(const CameraState& camera) {
  for (auto& m : discoveryMessages(discoverySettingsOf(settings_),
                                   discoveredCamera(camera.spec, settings_.snapshots))) {
    send(std::move(m.topic), std::move(m.payload), true);
  }
}

void EventPublisher::clearCamera(const CameraState& camera) {
  if (settings_.haDiscovery) {
    for (auto& m : discoveryRemovals(discoverySettingsOf(settings_),
                                     discoveredCamera(camera.spec, settings_.snapshots))) {
      send(std::move(m.topic), "", true);
    }
  }
  // An empty retained payload deletes the retained message.
  for (std::string& topic : retainedTopics(settings_.topicPrefix, camera.spec)) {
    send(std::move(topic), "", true);
  }
}

void EventPublisher::announce() {
  announced_ = true;
  send(statusTopic(), "online", true);
  if (!statusAttributes_.empty()) {
    send(statusAttributesTopic(settings_.topicPrefix), statusAttributes_, true);
  }
  if (settings_.haDiscovery) {
    DiscoveryMessage node = nodeDiscoveryMessage(discoverySettingsOf(settings_));
    send(std::move(node.topic), std::move(node.payload), true);
    for (const auto& [name, camera] : cameras_) publishDiscovery(camera);
  }
  for (const auto& [name, camera] : cameras_) {
    publishState(camera, "");
    for (const ZoneSpec& zone : camera.spec.zones) publishState(camera, zone.name);
    if (settings_.snapshots && !camera.snapshot.jpeg().empty()) {
      send(snapshotTopic(settings_.topicPrefix, name), camera.snapshot.jpeg(), true);
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
  if (zone.empty()) track_.publishLineCounts(camera.spec);
  if (!zone.empty()) track_.publishLoitering(camera.spec, zone);
}

void EventPublisher::onFrame(const ObservedFrame& frame, TimePoint now) {
  auto it = cameras_.find(frame.camera);
  if (it == cameras_.end()) return;  // a result of a camera removed meanwhile
  CameraState& camera = it->second;
  camera.width = frame.width;
  camera.height = frame.height;
  events_.clear();
  presence_.observe(*camera.tracker, frame, events_);
  // The best frame is kept (boxes drawn) for the events list, and for MQTT with snapshots on.
  if (frame.picture != nullptr && !frame.picture->empty() &&
      camera.tracker->bestFrame() == frame.id && !camera.snapshot.holds(frame.id)) {
    camera.snapshot.keep(frame);
  }
  publishEvents(camera, &frame, now);
  if (frame.zoneEvents != nullptr && frame.persons != nullptr) {
    track_.publishZoneEvents(camera.spec, *frame.zoneEvents, *frame.persons, frame.captureTime,
                             camera.width, camera.height);
  }
  if (frame.crossings != nullptr) {
    track_.publishCrossings(camera.spec, *frame.crossings, frame.captureTime, camera.width,
                            camera.height);
  }
}

void EventPublisher::onZoneEvents(std::string_view camera, const std::vector<ZoneEvent>& events,
                                  const std::vector<TrackedPerson>& persons, TimePoint time) {
  auto it = cameras_.find(camera);
  if (it == cameras_.end()) return;
  track_.publishZoneEvents(it->second.spec, events, persons, time, it->second.width,
                           it->second.height);
}

void EventPublisher::tick(std::chrono::steady_clock::time_point now) {
  const TimePoint wall = std::chrono::system_clock::now();
  for (auto& [name, camera] : cameras_) {
    events_.clear();
    camera.tracker->tick(now, events_);
    publishEvents(camera, nullptr, wall);
  }
  track_.save();
}

void EventPublisher::endAll(TimePoint now) {
  for (auto& [name, camera] : cameras_) endAll(camera, now);
  track_.save();
}

void EventPublisher::endAll(CameraState& camera, TimePoint now) {
  events_.clear();
  camera.tracker->endAll(events_);
  publishEvents(camera, nullptr, now);
}

void EventPublisher::publishEvents(CameraState& camera, const ObservedFrame* frame, TimePoint now) {
  if (frame != nullptr && !frame->backend.empty()) camera.backend = std::string(frame->backend);
  if (events_.empty()) return;
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
    recent_.onEvent(name, e);
    // A zone's event shows the camera event's best frame (zones keep no frames of their own).
    if (!e.zone.empty() && e.type == PresenceEventType::kNew && !camera.snapshot.jpeg().empty()) {
      recent_.setSnapshot(e.eventId, camera.snapshot.jpeg());
    }
    send(eventsTopic(prefix),
         presenceEventJson(name, e, camera.backend, latencyMs,
                           frame != nullptr ? frame->persons : nullptr),
         false);
    ++eventsPublished_;
    logPresenceEvent(name, e);
    if (e.zone.empty() && e.type != PresenceEventType::kEnd && camera.snapshot.due(e.bestFrame) &&
        camera.snapshot.encode(name)) {
      publishSnapshot(camera, e.eventId);
    }
  }
}

void EventPublisher::publishSnapshot(const CameraState& camera, const std::string& eventId) {
  recent_.setSnapshot(eventId, camera.snapshot.jpeg());
  if (!settings_.snapshots) return;
  send(snapshotTopic(settings_.topicPrefix, camera.spec.name), camera.snapshot.jpeg(), true);
  ++snapshotsPublished_;
}

std::optional<PresenceTracker::State> EventPublisher::state(std::string_view camera,
                                                            std::string_view zone) const {
  auto it = cameras_.find(camera);
  if (it == cameras_.end()) return std::nullopt;
  return it->second.tracker->state(zone);
}

}  // namespace vigil
