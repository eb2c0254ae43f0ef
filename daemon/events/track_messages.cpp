#include "daemon/events/track_messages.h"

#include <algorithm>

#include "daemon/base/log.h"
#include "daemon/events/event_json.h"
#include "daemon/events/ha_discovery.h"

namespace vigil {

TrackMessages::TrackMessages(std::string topicPrefix, MessageSink* sink,
                             std::filesystem::path lineCountsFile)
    : prefix_(std::move(topicPrefix)), sink_(sink), lineCounts_(std::move(lineCountsFile)) {}

void TrackMessages::send(std::string topic, std::string payload, bool retained) {
  if (sink_ != nullptr) sink_->publish(std::move(topic), std::move(payload), retained);
}

void TrackMessages::configureLines(const std::vector<PublishedCamera>& cameras) {
  std::vector<LineCounts::Line> lines;
  for (const PublishedCamera& c : cameras) {
    for (const LineSpec& l : c.lines) lines.push_back({c.name, l.name, l.points});
  }
  for (const std::string& line : lineCounts_.configure(lines)) {
    logger("events")->info("line {}: its points changed, its counts start again at 0", line);
  }
  lineCounts_.save();
}

bool TrackMessages::hasLoiter(const PublishedCamera& spec, std::string_view zone) {
  return std::any_of(spec.zones.begin(), spec.zones.end(),
                     [&](const ZoneSpec& z) { return z.name == zone && z.loiterAfter; });
}

bool TrackMessages::loitering(std::string_view camera, std::string_view zone) const {
  auto it = loiterers_.find(camera);
  return it != loiterers_.end() &&
         std::any_of(it->second.begin(), it->second.end(),
                     [&](const auto& entry) { return entry.first == zone; });
}

void TrackMessages::forget(std::string_view camera) {
  if (auto it = loiterers_.find(camera); it != loiterers_.end()) loiterers_.erase(it);
}

void TrackMessages::publishLoitering(const PublishedCamera& camera, const std::string& zone) {
  if (!hasLoiter(camera, zone)) return;
  send(loiteringTopic(prefix_, camera.name, zone), loitering(camera.name, zone) ? "ON" : "OFF",
       true);
}

void TrackMessages::publishLineCounts(const PublishedCamera& camera) {
  for (const LineSpec& line : camera.lines) {
    for (CrossingDirection d : {CrossingDirection::kIn, CrossingDirection::kOut}) {
      const std::string direction(crossingDirectionName(d));
      send(lineCountTopic(prefix_, camera.name, line.name, direction),
           std::to_string(lineCounts_.count(camera.name, line.name, d).value_or(0)), true);
    }
  }
}

void TrackMessages::publishCrossings(const PublishedCamera& camera,
                                     const std::vector<LineCrossingEvent>& crossings,
                                     TimePoint time, int width, int height) {
  const std::string& name = camera.name;
  for (const LineCrossingEvent& e : crossings) {
    auto line = std::find_if(camera.lines.begin(), camera.lines.end(),
                             [&](const LineSpec& l) { return l.name == e.line; });
    if (line == camera.lines.end()) continue;  // a line reloaded away meanwhile
    const std::uint64_t count = lineCounts_.add(name, e.line, e.direction);
    const std::string direction(crossingDirectionName(e.direction));
    send(lineEventsTopic(prefix_), lineEventJson(name, *line, e, count, time, width, height),
         false);
    send(lineCountTopic(prefix_, name, e.line, direction), std::to_string(count), true);
    // One a person: debug (the message and the count are on MQTT).
    logger("events")->debug("[cam={}] line {}: track {} crossed {} ({}), {} so far", name, e.line,
                            e.trackId, direction, line->directionName(e.direction), count);
  }
}

void TrackMessages::publishZoneEvents(const PublishedCamera& camera,
                                      const std::vector<ZoneEvent>& events,
                                      const std::vector<TrackedPerson>& persons, TimePoint time,
                                      int width, int height) {
  const std::string& name = camera.name;
  for (const ZoneEvent& e : events) {
    auto person = std::find_if(persons.begin(), persons.end(),
                               [&](const TrackedPerson& p) { return p.id == e.trackId; });
    send(zoneEventsTopic(prefix_),
         zoneEventJson(name, e, time, person == persons.end() ? nullptr : &*person, width, height),
         false);
    ++zoneEventsPublished_;
    // One a person: debug (the message is on MQTT; the zone's presence says it at info).
    logger("events")->debug("[cam={}] zone {}: track {} {} ({:.1f} s inside)", name, e.zone,
                            e.trackId, zoneEventName(e.type), e.secondsInside);
    const bool before = loitering(name, e.zone);
    auto& loiterers = loiterers_[name];
    if (e.type == ZoneEventType::kLoiter) loiterers.emplace(e.zone, e.trackId);
    if (e.type == ZoneEventType::kLeave) loiterers.erase({e.zone, e.trackId});
    if (loitering(name, e.zone) != before && hasLoiter(camera, e.zone)) {
      send(loiteringTopic(prefix_, name, e.zone), before ? "OFF" : "ON", true);
    }
  }
}

}  // namespace vigil
