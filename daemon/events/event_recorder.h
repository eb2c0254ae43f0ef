#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vigil {

// One presence event as it stands after its latest message (new, update or end): what the
// events list shows and the history keeps.
struct EventRecord {
  std::string id;
  std::string camera;
  std::string zone;  // empty: the whole camera
  std::chrono::system_clock::time_point start;
  std::optional<std::chrono::system_clock::time_point> end;  // nullopt: still going on
  int count = 0;     // persons in the latest message of the event; 0 once it ended
  int maxCount = 0;  // most persons at once
  float maxScore = 0;
  std::vector<std::uint64_t> trackIds;  // every track counted in it (tracked cameras), sorted
  std::string backend;                  // the backend of the camera's latest frame
};

// The event's pictures: the one published when it began (also its best until a better one
// comes) and the best one so far.
enum class EventPictureKind { kFirst, kBest };

// Where the publisher hands what it wants kept: the history (history/EventHistory) implements
// it. Both calls come from the control thread and must not block it.
class EventRecorder {
 public:
  virtual ~EventRecorder() = default;
  // The event's state after its latest message (an insert the first time, then an update).
  virtual void record(const EventRecord& event) = 0;
  // The event's picture, a JPEG with its boxes, time and camera drawn on (after record()).
  virtual void recordPicture(const std::string& eventId, EventPictureKind kind,
                             const std::string& jpeg) = 0;
};

}  // namespace vigil
