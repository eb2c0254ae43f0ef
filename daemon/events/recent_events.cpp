#include "daemon/events/recent_events.h"

#include <algorithm>
#include <utility>

#include "daemon/events/event_json.h"

namespace vigil {

void RecentEvents::onEvent(const std::string& camera, const PresenceEvent& event) {
  Entry* entry = findMutable(event.eventId);
  if (entry == nullptr) {
    if (event.type != PresenceEventType::kNew) return;  // began before the list remembers
    if (entries_.size() == capacity_) entries_.pop_front();
    entries_.push_back(Entry{});
    entry = &entries_.back();
    entry->id = event.eventId;
    entry->camera = camera;
    entry->zone = event.zone;
    entry->start = event.start;
  }
  if (event.type == PresenceEventType::kEnd) {
    entry->end = event.end;
    entry->count = 0;
  } else {
    entry->count = event.count;
    entry->maxCount = std::max(entry->maxCount, event.count);
  }
  entry->maxScore = std::max(entry->maxScore, event.maxScore);
}

void RecentEvents::setSnapshot(const std::string& eventId, std::string jpeg) {
  if (Entry* entry = findMutable(eventId)) entry->snapshotJpeg = std::move(jpeg);
}

const RecentEvents::Entry* RecentEvents::find(const std::string& eventId) const {
  for (const Entry& e : entries_) {
    if (e.id == eventId) return &e;
  }
  return nullptr;
}

RecentEvents::Entry* RecentEvents::findMutable(const std::string& eventId) {
  return const_cast<Entry*>(std::as_const(*this).find(eventId));
}

nlohmann::json RecentEvents::json() const {
  nlohmann::json out = nlohmann::json::array();
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    const Entry& e = *it;
    out.push_back({{"id", e.id},
                   {"camera", e.camera},
                   {"zone", e.zone.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.zone)},
                   {"start", isoUtc(e.start)},
                   {"end", e.end ? nlohmann::json(isoUtc(*e.end)) : nlohmann::json(nullptr)},
                   {"count", e.count},
                   {"max_count", e.maxCount},
                   {"max_score", e.maxScore},
                   {"snapshot", e.snapshotJpeg.empty()
                                    ? nlohmann::json(nullptr)
                                    : nlohmann::json("api/events/" + e.id + "/snapshot.jpg")}});
  }
  return out;
}

}  // namespace vigil
