#include "daemon/events/presence_messages.h"

#include <fmt/format.h>

#include <optional>

#include "daemon/base/log.h"
#include "daemon/events/event_json.h"
#include "daemon/events/ha_discovery.h"

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

}  // namespace

PresenceMessages::PresenceMessages(std::string topicPrefix, std::string node, bool snapshots,
                                   MessageSink* sink)
    : prefix_(std::move(topicPrefix)), node_(std::move(node)), snapshots_(snapshots), sink_(sink) {}

void PresenceMessages::send(std::string topic, std::string payload, bool retained) {
  if (sink_ != nullptr) sink_->publish(std::move(topic), std::move(payload), retained);
}

void PresenceMessages::publishEvents(const std::string& camera,
                                     const std::vector<PresenceEvent>& events,
                                     EventSnapshot& snapshot, const std::string& backend,
                                     const ObservedFrame* frame, TimePoint now, bool history) {
  for (const PresenceEvent& e : events) {
    std::optional<double> latencyMs;
    if (frame != nullptr && e.type != PresenceEventType::kEnd) {
      latencyMs = std::chrono::duration<double, std::milli>(now - frame->captureTime).count();
    }
    const RecentEvents::Entry* entry = recent_.onEvent(camera, e, backend);
    if (entry != nullptr && history && recorder_ != nullptr) recorder_->record(*entry);
    // The picture first: whoever reacts to ON or `new` finds this event's.
    const bool picture = publishPicture(camera, e, snapshot, history) ||
                         (entry != nullptr && !entry->snapshotJpeg.empty());
    if (e.type != PresenceEventType::kUpdate) {
      send(personTopic(prefix_, camera, e.zone), e.type == PresenceEventType::kNew ? "ON" : "OFF",
           true);
    }
    send(countTopic(prefix_, camera, e.zone), std::to_string(e.count), true);
    send(eventsTopic(prefix_),
         presenceEventJson(camera, e,
                           EventSource{node_, backend, picture, entry ? entry->maxCount : e.count},
                           latencyMs, frame != nullptr ? frame->persons : nullptr),
         false);
    ++eventsPublished_;
    logPresenceEvent(camera, e);
  }
}

bool PresenceMessages::publishPicture(const std::string& camera, const PresenceEvent& e,
                                      EventSnapshot& snapshot, bool history) {
  if (e.type == PresenceEventType::kEnd) return false;
  const bool zone = !e.zone.empty();
  if (zone ? e.type != PresenceEventType::kNew || snapshot.jpeg().empty()
           : !snapshot.due(e.bestFrame) || !snapshot.encode(camera)) {
    return false;
  }
  recent_.setSnapshot(e.eventId, snapshot.jpeg());
  if (history && recorder_ != nullptr) {
    recorder_->recordPicture(
        e.eventId,
        e.type == PresenceEventType::kNew ? EventPictureKind::kFirst : EventPictureKind::kBest,
        snapshot.jpeg());
  }
  if (snapshots_ && !zone) {
    send(snapshotTopic(prefix_, camera), snapshot.jpeg(), true);
    ++snapshotsPublished_;
  }
  return true;
}

void PresenceMessages::publishState(const std::string& camera, const std::string& zone,
                                    const PresenceTracker::State& state) {
  send(personTopic(prefix_, camera, zone), state.present ? "ON" : "OFF", true);
  send(countTopic(prefix_, camera, zone), std::to_string(state.count), true);
}

void PresenceMessages::republishSnapshot(const std::string& camera, const EventSnapshot& snapshot) {
  if (snapshots_ && !snapshot.jpeg().empty()) {
    send(snapshotTopic(prefix_, camera), snapshot.jpeg(), true);
  }
}

}  // namespace vigil
