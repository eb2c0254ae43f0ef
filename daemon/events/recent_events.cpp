#include "daemon/events/recent_events.h"

#include <algorithm>
#include <utility>

#include "daemon/events/event_json.h"

namespace vigil {

const RecentEvents::Entry* RecentEvents::onEvent(const std::string& camera,
                                                 const PresenceEvent& event,
                                                 const std::string& backend) {
  Entry* entry = findMutable(event.eventId);
  if (entry == nullptr) {
    if (event.type != PresenceEventType::kNew) return nullptr;  // began before the list remembers
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
  for (std::uint64_t id : event.trackIds) {
    auto at = std::lower_bound(entry->trackIds.begin(), entry->trackIds.end(), id);
    if (at == entry->trackIds.end() || *at != id) entry->trackIds.insert(at, id);
  }
  if (!backend.empty()) entry->backend = backend;
  return entry;
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
    out.push_back(eventRecordJson(*it, it->pictures()));
  }
  return out;
}

}  // namespace vigil
