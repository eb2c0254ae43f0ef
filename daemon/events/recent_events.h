#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "daemon/events/presence_tracker.h"

namespace vigil {

// The last presence events of every camera and zone, for the status page and /api/events: in
// memory, bounded, gone at a restart on purpose (MQTT and the log are the record). One entry
// per event: it opens at `new`, follows its updates (count, max score) and closes at `end`.
//
// Threads: the control thread only (the publisher writes, the HTTP handlers read).
class RecentEvents {
 public:
  struct Entry {
    std::string id;
    std::string camera;
    std::string zone;  // empty: the whole camera
    std::chrono::system_clock::time_point start;
    std::optional<std::chrono::system_clock::time_point> end;  // nullopt: still going on
    int count = 0;     // persons in the latest message of the event
    int maxCount = 0;  // most persons at once
    float maxScore = 0;
    std::string snapshotJpeg;  // the event's best frame with its boxes; empty: none yet
  };

  explicit RecentEvents(std::size_t capacity = kDefaultCapacity) : capacity_(capacity) {}

  static constexpr std::size_t kDefaultCapacity = 50;

  void onEvent(const std::string& camera, const PresenceEvent& event);
  // The best frame of the event so far (camera-wide events), replacing the one before.
  void setSnapshot(const std::string& eventId, std::string jpeg);

  // Newest first: id, camera, zone (null for the camera), start and end (ISO 8601 UTC, end null
  // while it goes on), count, max_count, max_score and snapshot (its URL under /api/events, or
  // null).
  nlohmann::json json() const;
  const Entry* find(const std::string& eventId) const;

 private:
  Entry* findMutable(const std::string& eventId);

  std::size_t capacity_;
  std::deque<Entry> entries_;  // oldest first
};

}  // namespace vigil
