#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/events/event_recorder.h"
#include "daemon/events/person_tracks.h"
#include "daemon/events/presence_tracker.h"

namespace vigil {

// The JSON payloads of <prefix>/events and <prefix>/zone_events (schema 1; documented in
// event_publisher.h and README.md).

// Who sent a presence event and what it has so far: the node, the backend of the camera's
// latest frame, whether the event has a picture yet (its path, eventPicturePath, in
// "snapshot"), and the most persons at once in it ("max_count").
struct EventSource {
  std::string_view node;
  std::string_view backend;
  bool picture = false;
  int maxCount = 0;
};

// A presence event. `persons`: the camera's tracked persons on the triggering frame (first
// seen in Unix seconds), which name the event's track ids; nullptr for an untracked camera or
// an event without a frame.
std::string presenceEventJson(std::string_view camera, const PresenceEvent& event,
                              const EventSource& source, std::optional<double> latencyMs,
                              const std::vector<TrackedPerson>* persons);

// Where the box serves an event's pictures: "/api/events/<id>/snapshot.jpg" (the best so far)
// and "/api/events/<id>/first.jpg" (the one published when it began).
std::string eventPicturePath(std::string_view eventId, EventPictureKind kind);

// Which pictures of an event are kept.
struct EventPictures {
  bool first = false;
  bool best = false;
};

// An event of the events list and the history (/api/events): id, camera, zone (null for the
// camera), start and end (ISO 8601 UTC with the date; end null while it goes on), count,
// max_count, max_score, track_ids, backend (null: unknown), and snapshot and first_picture
// (their paths without the leading '/', relative to the page; null: none).
nlohmann::json eventRecordJson(const EventRecord& event, EventPictures pictures);

// A zone event of tracking at `time`. `person`: the track, if still known (its box normalized
// by the frame's width x height); nullptr leaves box and score out.
std::string zoneEventJson(std::string_view camera, const ZoneEvent& event,
                          std::chrono::system_clock::time_point time, const TrackedPerson* person,
                          int width, int height);

// A line crossing of a tracked person at `time`: {"schema":1, "type":"cross", "camera", "line",
// "direction" (in or out), "direction_name" (the line's name for it), "count" (the direction's
// running count with this crossing), "track_id", "time", "box" (normalized by the frame's
// width x height, with "score")}.
std::string lineEventJson(std::string_view camera, const LineSpec& line,
                          const LineCrossingEvent& event, std::uint64_t count,
                          std::chrono::system_clock::time_point time, int width, int height);

// "2026-11-29T21:40:01.123Z"
std::string isoUtc(std::chrono::system_clock::time_point time);
std::string isoUtcOfUnixSeconds(double seconds);

}  // namespace vigil
