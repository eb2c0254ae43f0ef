#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/events/line_counts.h"
#include "daemon/events/message_sink.h"
#include "daemon/events/person_tracks.h"
#include "daemon/events/published_camera.h"

namespace vigil {

// The messages about tracked persons that presence does not make (EventPublisher's topics):
// zone events (enter, leave, loiter) with each loiter zone's retained loitering state, and line
// crossings with each line's retained running counts, which LineCounts keeps across restarts and
// reloads. Topics under `topicPrefix`; messages go to `sink` (nullptr: none).
// Threads: the control thread.
class TrackMessages {
 public:
  using TimePoint = std::chrono::system_clock::time_point;

  TrackMessages(std::string topicPrefix, MessageSink* sink, std::filesystem::path lineCountsFile);

  // The configured lines: a line whose points changed starts again at 0 (and says so).
  void configureLines(const std::vector<PublishedCamera>& cameras);
  // A frame's zone events and line crossings, at `time`, on a frame of `width` x `height`.
  void publishZoneEvents(const PublishedCamera& camera, const std::vector<ZoneEvent>& events,
                         const std::vector<TrackedPerson>& persons, TimePoint time, int width,
                         int height);
  void publishCrossings(const PublishedCamera& camera,
                        const std::vector<LineCrossingEvent>& crossings, TimePoint time, int width,
                        int height);
  // The retained states: the zone's loitering, the camera's lines' counts.
  void publishLoitering(const PublishedCamera& camera, const std::string& zone);
  void publishLineCounts(const PublishedCamera& camera);
  // A removed camera's loiterers are forgotten.
  void forget(std::string_view camera);
  // Writes the line counts to their file.
  void save() { lineCounts_.save(); }

  static bool hasLoiter(const PublishedCamera& spec, std::string_view zone);
  std::uint64_t zoneEventsPublished() const { return zoneEventsPublished_; }
  const LineCounts& lineCounts() const { return lineCounts_; }

 private:
  bool loitering(std::string_view camera, std::string_view zone) const;
  void send(std::string topic, std::string payload, bool retained);

  std::string prefix_;
  MessageSink* sink_;
  LineCounts lineCounts_;
  // Tracks that loitered and are still in the zone, by camera: (zone, track id).
  std::map<std::string, std::set<std::pair<std::string, std::uint64_t>>, std::less<>> loiterers_;
  std::uint64_t zoneEventsPublished_ = 0;
};

}  // namespace vigil
