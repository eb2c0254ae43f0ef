#include "daemon/events/event_publisher.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>
#include <set>

#include "daemon/base/log.h"
#include "daemon/events/event_json.h"
#include "detector/annotate.h"

namespace vigil {

namespace {

constexpr int kSnapshotQuality = 85;

}  // namespace

EventPublisher::EventPublisher(EventPublisherSettings settings, MessageSink* sink)
    : settings_(std::move(settings)), sink_(sink), lineCounts_(settings_.lineCountsFile) {}

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
                           settings_.version, settings_.qos, settings_.configurationUrl};
}

DiscoveredCamera EventPublisher::discovered(const CameraState& camera) const {
  DiscoveredCamera d{camera.spec.name, {}, settings_.snapshots, {}, {}};
  for (const ZoneSpec& zone : camera.spec.zones) {
    d.zones.push_back(zone.name);
    if (zone.loiterAfter) d.loiterZones.push_back(zone.name);
  }
  for (const LineSpec& line : camera.spec.lines) {
    d.lines.push_back({line.name, line.inName, line.outName});
  }
  return d;
}

EventPublisher::CameraState& EventPublisher::addCamera(const PublishedCamera& spec) {
  CameraState& camera = cameras_[spec.name];
  camera.spec = spec;
  camera.tracker =
      std::make_unique<PresenceTracker>(spec.name, spec.presence, spec.zones, spec.masks);
  return camera;
}

void EventPublisher::configureLines(const std::vector<PublishedCamera>& cameras) {
  std::vector<LineCounts::Line> lines;
  for (const PublishedCamera& c : cameras) {
    for (const LineSpec& l : c.lines) lines.push_back({c.name, l.name, l.points});
  }
  for (const std::string& line : lineCounts_.configure(lines)) {
    logger("events")->info("line {}: its points changed, its counts start again at 0", line);
  }
  lineCounts_.save();
}

void EventPublisher::setCameras(const std::vector<PublishedCamera>& cameras) {
  const auto now = std::chrono::system_clock::now();
  configureLines(cameras);
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
    send(loiteringTopic(prefix, camera.spec.name, zone.name), "", true);
  }
  for (const LineSpec& line : camera.spec.lines) {
    for (const char* direction : {"in", "out"}) {
      send(lineCountTopic(prefix, camera.spec.name, line.name, direction), "", true);
    }
  }
}

void EventPublisher::announce() {
  announced_ = true;
  send(statusTopic(), "online", true);
  if (!statusAttributes_.empty()) {
    send(statusAttributesTopic(settings_.topicPrefix), statusAttributes_, true);
  }
  if (settings_.haDiscovery) {
    DiscoveryMessage node = nodeDiscoveryMessage(discoverySettings());
    send(std::move(node.topic), std::move(node.payload), true);
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
  if (zone.empty()) publishLineCounts(camera);
  if (!zone.empty() && hasLoiter(camera.spec, zone)) {
    send(loiteringTopic(prefix, camera.spec.name, zone), loitering(camera, zone) ? "ON" : "OFF",
         true);
  }
}

void EventPublisher::publishLineCounts(const CameraState& camera) {
  for (const LineSpec& line : camera.spec.lines) {
    for (CrossingDirection d : {CrossingDirection::kIn, CrossingDirection::kOut}) {
      const std::string direction(crossingDirectionName(d));
      send(lineCountTopic(settings_.topicPrefix, camera.spec.name, line.name, direction),
           std::to_string(lineCounts_.count(camera.spec.name, line.name, d).value_or(0)), true);
    }
  }
}

void EventPublisher::publishCrossings(const CameraState& camera,
                                      const std::vector<LineCrossingEvent>& crossings,
                                      TimePoint time) {
  const std::string& name = camera.spec.name;
  for (const LineCrossingEvent& e : crossings) {
    auto line = std::find_if(camera.spec.lines.begin(), camera.spec.lines.end(),
                             [&](const LineSpec& l) { return l.name == e.line; });
    if (line == camera.spec.lines.end()) continue;  // a line reloaded away meanwhile
    const std::uint64_t count = lineCounts_.add(name, e.line, e.direction);
    const std::string direction(crossingDirectionName(e.direction));
    send(lineEventsTopic(settings_.topicPrefix),
         lineEventJson(name, *line, e, count, time, camera.width, camera.height), false);
    send(lineCountTopic(settings_.topicPrefix, name, e.line, direction), std::to_string(count),
         true);
    logger("events")->info("[cam={}] line {}: track {} crossed {} ({}), {} so far", name, e.line,
                           e.trackId, direction, line->directionName(e.direction), count);
  }
}

bool EventPublisher::hasLoiter(const PublishedCamera& spec, std::string_view zone) {
  return std::any_of(spec.zones.begin(), spec.zones.end(),
                     [&](const ZoneSpec& z) { return z.name == zone && z.loiterAfter; });
}

bool EventPublisher::loitering(const CameraState& camera, std::string_view zone) {
  return std::any_of(camera.loiterers.begin(), camera.loiterers.end(),
                     [&](const auto& entry) { return entry.first == zone; });
}

void EventPublisher::onFrame(const ObservedFrame& frame, TimePoint now) {
  auto it = cameras_.find(frame.camera);
  if (it == cameras_.end()) return;  // a result of a camera removed meanwhile
  CameraState& camera = it->second;
  camera.width = frame.width;
  camera.height = frame.height;
  events_.clear();
  if (frame.persons != nullptr) {
    // Tracking: the tracked persons are who counts, so a frame that misses one keeps the count.
    trackedBoxes_.clear();
    trackIds_.clear();
    for (const TrackedPerson& p : *frame.persons) {
      trackedBoxes_.push_back(Detection{p.box, p.score, 0});
      trackIds_.push_back(p.id);
    }
    camera.tracker->observe(
        TrackedFrame{frame.captureMonotonic, frame.captureTime, frame.sequence, frame.id,
                     frame.width, frame.height, &trackedBoxes_, &trackIds_},
        events_);
  } else {
    camera.tracker->observe(TrackedFrame{frame.captureMonotonic, frame.captureTime, frame.sequence,
                                         frame.id, frame.width, frame.height, frame.detections},
                            events_);
  }
  // The best frame is kept (boxes drawn) for the events list, and for MQTT with snapshots on.
  if (frame.picture != nullptr && !frame.picture->empty() &&
      camera.tracker->bestFrame() == frame.id && camera.candidateId != frame.id) {
    camera.candidate.assign(*frame.picture);  // reuses the storage
    camera.candidatePersons.clear();
    if (frame.detections != nullptr) {
      for (const Detection& d : *frame.detections) {
        if (d.classId == 0) camera.candidatePersons.push_back(d);
      }
    }
    camera.candidateId = frame.id;
  }
  publishEvents(camera, &frame, now);
  if (frame.zoneEvents != nullptr && frame.persons != nullptr) {
    publishZoneEvents(camera, *frame.zoneEvents, *frame.persons, frame.captureTime);
  }
  if (frame.crossings != nullptr) publishCrossings(camera, *frame.crossings, frame.captureTime);
}

void EventPublisher::onZoneEvents(std::string_view camera, const std::vector<ZoneEvent>& events,
                                  const std::vector<TrackedPerson>& persons, TimePoint time) {
  auto it = cameras_.find(camera);
  if (it != cameras_.end()) publishZoneEvents(it->second, events, persons, time);
}

void EventPublisher::publishZoneEvents(CameraState& camera, const std::vector<ZoneEvent>& events,
                                       const std::vector<TrackedPerson>& persons, TimePoint time) {
  const std::string& name = camera.spec.name;
  for (const ZoneEvent& e : events) {
    auto person = std::find_if(persons.begin(), persons.end(),
                               [&](const TrackedPerson& p) { return p.id == e.trackId; });
    send(zoneEventsTopic(settings_.topicPrefix),
         zoneEventJson(name, e, time, person == persons.end() ? nullptr : &*person, camera.width,
                       camera.height),
         false);
    ++zoneEventsPublished_;
    logger("events")->info("[cam={}] zone {}: track {} {} ({:.1f} s inside)", name, e.zone,
                           e.trackId, zoneEventName(e.type), e.secondsInside);
    const bool before = loitering(camera, e.zone);
    if (e.type == ZoneEventType::kLoiter) camera.loiterers.emplace(e.zone, e.trackId);
    if (e.type == ZoneEventType::kLeave) camera.loiterers.erase({e.zone, e.trackId});
    if (loitering(camera, e.zone) != before && hasLoiter(camera.spec, e.zone)) {
      send(loiteringTopic(settings_.topicPrefix, name, e.zone), before ? "OFF" : "ON", true);
    }
  }
}

void EventPublisher::tick(std::chrono::steady_clock::time_point now) {
  const TimePoint wall = std::chrono::system_clock::now();
  for (auto& [name, camera] : cameras_) {
    events_.clear();
    camera.tracker->tick(now, events_);
    publishEvents(camera, nullptr, wall);
  }
  lineCounts_.save();
}

void EventPublisher::endAll(TimePoint now) {
  for (auto& [name, camera] : cameras_) endAll(camera, now);
  lineCounts_.save();
}

void EventPublisher::endAll(CameraState& camera, TimePoint now) {
  events_.clear();
  camera.tracker->endAll(events_);
  publishEvents(camera, nullptr, now);
}

void EventPublisher::publishEvents(CameraState& camera, const ObservedFrame* frame, TimePoint now) {
  if (frame != nullptr && !frame->backend.empty()) camera.backend = std::string(frame->backend);
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
    recent_.onEvent(name, e);
    // A zone's event shows the camera event's best frame (zones keep no frames of their own).
    if (!e.zone.empty() && e.type == PresenceEventType::kNew && !camera.snapshotJpeg.empty()) {
      recent_.setSnapshot(e.eventId, camera.snapshotJpeg);
    }
    send(eventsTopic(prefix),
         presenceEventJson(name, e, camera.backend, latencyMs, frame != nullptr ? frame->persons : nullptr),
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
    if (e.zone.empty() && e.type != PresenceEventType::kEnd && camera.candidateId == e.bestFrame &&
        camera.publishedId != e.bestFrame) {
      publishSnapshot(camera, e.eventId);
    }
  }
}

void EventPublisher::publishSnapshot(CameraState& camera, const std::string& eventId) {
  std::vector<unsigned char> jpeg;
  auto pixels = camera.candidate.bgr();
  if (!pixels) {
    logger("events")->warn("[cam={}] cannot decode the snapshot's frame: {}", camera.spec.name,
                           pixels.error().message);
    return;
  }
  try {
    cv::Mat drawn = pixels->clone();
    drawDetections(drawn, camera.candidatePersons, {"person"});
    if (!cv::imencode(".jpg", drawn, jpeg, {cv::IMWRITE_JPEG_QUALITY, kSnapshotQuality})) {
      logger("events")->warn("[cam={}] cannot encode the snapshot", camera.spec.name);
      return;
    }
  } catch (const cv::Exception& e) {
    logger("events")->warn("[cam={}] cannot encode the snapshot: {}", camera.spec.name, e.what());
    return;
  }
  camera.snapshotJpeg.assign(jpeg.begin(), jpeg.end());
  camera.publishedId = camera.candidateId;
  recent_.setSnapshot(eventId, camera.snapshotJpeg);
  if (!settings_.snapshots) return;
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
