#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "daemon/events/event_json.h"
#include "daemon/events/event_recorder.h"
#include "daemon/events/presence_tracker.h"

namespace vigil {

// The last presence events of every camera and zone: in memory, bounded. The history on disk
// (history/) keeps them across restarts; this list is what the page and /api/events show when
// there is none (no state directory), and what the publisher folds each message into. One entry
// per event: it opens at `new`, follows its updates (count, max score) and closes at `end`.
//
// Threads: the control thread only (the publisher writes, the HTTP handlers read).
class RecentEvents {
 public:
  struct Entry : EventRecord {
    std::string snapshotJpeg;  // the event's best frame with its boxes; empty: none yet
    // What it keeps: its best picture only (the first one is the history's).
    EventPictures pictures() const { return {.best = !snapshotJpeg.empty()}; }
  };

  explicit RecentEvents(std::size_t capacity = kDefaultCapacity) : capacity_(capacity) {}

  static constexpr std::size_t kDefaultCapacity = 50;

  // The event's message folded into its entry (`backend`: of the camera's latest frame); the
  // entry, nullptr for an event that began before the list remembers.
  const Entry* onEvent(const std::string& camera, const PresenceEvent& event,
                       const std::string& backend);
  // The best frame of the event so far (camera-wide events), replacing the one before.
  void setSnapshot(const std::string& eventId, std::string jpeg);

  // Newest first, each as eventRecordJson (event_json.h) says.
  nlohmann::json json() const;
  const Entry* find(const std::string& eventId) const;

 private:
  Entry* findMutable(const std::string& eventId);

  std::size_t capacity_;
  std::deque<Entry> entries_;  // oldest first
};

}  // namespace vigil
