#include "daemon/events/event_publisher.h"

#include <algorithm>
#include <set>

#include "daemon/base/log.h"
#include "daemon/events/camera_topics.h"

namespace vigil {

EventPublisher::EventPublisher(EventPublisherSettings settings, MessageSink* sink)
    : settings_(std::move(settings)),
      sink_(sink),
      availability_(settings_.topicPrefix, sink),
      presenceMessages_(settings_.topicPrefix, settings_.instance, settings_.snapshots, sink),
      ha_(DiscoverySettings{settings_.haPrefix, settings_.topicPrefix, settings_.instance,
                            settings_.version, settings_.qos, settings_.configurationUrl},
          settings_.haDiscovery, settings_.snapshots, sink),
      track_(settings_.topicPrefix, sink, settings_.lineCountsFile) {}

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
    if (next == cameras.end()) {
      track_.forget(it->first);
      availability_.forget(it->first);
    }
    it = next == cameras.end() ? cameras_.erase(it) : ++it;
  }
  for (const PublishedCamera& spec : cameras) {
    auto it = cameras_.find(spec.name);
    if (it != cameras_.end() && it->second.spec == spec) continue;
    CameraState& camera = addCamera(spec);
    if (!announced_) continue;
    ha_.announce(camera.spec);
    publishState(camera, "");
    for (const ZoneSpec& zone : camera.spec.zones) publishState(camera, zone.name);
  }
  if (!announced_) announce();
}

void EventPublisher::clearCamera(const CameraState& camera) {
  ha_.remove(camera.spec);
  // An empty retained payload deletes the retained message.
  for (std::string& topic : retainedTopics(settings_.topicPrefix, camera.spec)) {
    send(std::move(topic), "", true);
  }
}

void EventPublisher::announce() {
  announced_ = true;
  availability_.announce();
  ha_.announceNode();
  for (const auto& [name, camera] : cameras_) ha_.announce(camera.spec);
  for (const auto& [name, camera] : cameras_) {
    publishState(camera, "");
    for (const ZoneSpec& zone : camera.spec.zones) publishState(camera, zone.name);
    presenceMessages_.republishSnapshot(name, camera.snapshot);
    availability_.announceCamera(name);
  }
}

void EventPublisher::setCameraAvailable(std::string_view camera, bool available) {
  auto it = cameras_.find(camera);
  if (it != cameras_.end()) availability_.setCameraAvailable(it->first, available, announced_);
}

void EventPublisher::onHomeAssistantStatus(std::string_view payload) {
  if (payload != "online") return;
  logger("events")->info("Home Assistant is online: announcing the entities again");
  announce();
}

void EventPublisher::publishState(const CameraState& camera, const std::string& zone) {
  presenceMessages_.publishState(camera.spec.name, zone, camera.tracker->state(zone));
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
  presenceMessages_.publishEvents(camera.spec.name, events_, camera.snapshot, camera.backend, frame,
                                  now, camera.spec.history);
}

std::optional<PresenceTracker::State> EventPublisher::state(std::string_view camera,
                                                            std::string_view zone) const {
  auto it = cameras_.find(camera);
  if (it == cameras_.end()) return std::nullopt;
  return it->second.tracker->state(zone);
}

}  // namespace vigil
