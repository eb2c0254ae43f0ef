#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <opencv2/core.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/capture/picture/captured_picture.h"
#include "daemon/events/availability_messages.h"
#include "daemon/events/event_json.h"
#include "daemon/events/event_snapshot.h"
#include "daemon/events/frame_presence.h"
#include "daemon/events/ha_discovery.h"
#include "daemon/events/ha_entities.h"
#include "daemon/events/line_counts.h"
#include "daemon/events/message_sink.h"
#include "daemon/events/observed_frame.h"
#include "daemon/events/person_tracks.h"
#include "daemon/events/presence_messages.h"
#include "daemon/events/presence_tracker.h"
#include "daemon/events/published_camera.h"
#include "daemon/events/recent_events.h"
#include "daemon/events/track_messages.h"
#include "detector/box.h"

namespace vigil {

struct EventPublisherSettings {
  std::string topicPrefix = "vigil";
  bool haDiscovery = true;
  std::string haPrefix = "homeassistant";
  bool snapshots = false;          // publish the best frame of each event as a retained JPEG
  std::string instance = "vigil";  // the node (Config::node); names the Home Assistant device
  std::string configurationUrl;    // the status page for Home Assistant; empty: not reachable
  std::string version;
  int qos = 1;  // told to Home Assistant in the discovery payloads
  // Where the line counts continue from after a restart (LineCounts); empty: they start at 0.
  std::filesystem::path lineCountsFile;
};

// Turns frame results into presence state and events, and publishes them (topics under
// `topicPrefix`, default "vigil"):
//   <prefix>/status                  retained online (offline is the client's will and stop)
//   <prefix>/<camera>/status         retained online while the camera delivers frames, else offline
//   <prefix>/status/attributes       retained JSON: the backend in use and its last fallback
//                                    (setStatusAttributes), every entity's HA attributes
//   <prefix>/<camera>/person         retained ON / OFF          (and <camera>/<zone>/person)
//   <prefix>/<camera>/person/count   retained number of persons (and <camera>/<zone>/...)
//   <prefix>/<camera>/person/snapshot retained JPEG of the best frame of the event (optional),
//                                    a new event's published before its ON and `new`
//   <prefix>/events                  JSON new / update / end, not retained
//   <prefix>/zone_events             JSON enter / leave / loiter of tracked persons, not retained
//   <prefix>/<camera>/<zone>/loitering retained ON / OFF (zones with loiter_after)
//   <prefix>/line_events             JSON cross of a tracked person over a line, not retained
//   <prefix>/<camera>/<line>/in|out  retained running count of the line's direction (LineCounts:
//                                    kept across restarts and reloads while the line stays)
// plus Home Assistant discovery (see ha_discovery.h).
//
// Event JSON (schema 1): {"schema":1, "type":"new"|"update"|"end", "camera", "zone" (null for
// the whole camera), "event_id", "start", "end" (ISO 8601 UTC with milliseconds; end null until
// the end), "count", "max_count" (most persons at once so far), "max_score", "boxes" [{"x","y","w","h","score"}] normalized 0..1,
// "persons" (tracked cameras: the boxes with "id", "first_seen", "stationary", "zones"; else
// empty), "backend", "node", "snapshot" (the path of the event's picture on the box's web
// server, /api/events/<id>/snapshot.jpg; null before it has one), "latency_ms" (capture of the
// triggering frame to publish; null for end)}.
// With tracking, who counts are the camera's tracked persons (a briefly missed person still
// counts, with the box tracking predicts).
//
// Zone event JSON (schema 1): {"schema":1, "type":"enter"|"leave"|"loiter", "camera", "zone",
// "track_id", "time", "seconds_inside", and while the track is known "box" (normalized, with
// "score"), "first_seen", "stationary"}.
//
// Line event JSON: event_json.h (lineEventJson).
//
// Count topics follow the events, so they are rate-limited like updates (update_interval).
//
// Threads: one thread (the daemon's io_context) calls everything. `sink` may be nullptr (no
// MQTT configured): state and events are still kept and logged.
class EventPublisher {
 public:
  using TimePoint = std::chrono::system_clock::time_point;

  EventPublisher(EventPublisherSettings settings, MessageSink* sink);

  // Adds, replaces (settings changed) and removes cameras. A replaced or removed camera ends
  // its open events first; a removed camera's retained topics and discovery entities are
  // cleared. The first call announces everything (see announce()), so the retained state is
  // OFF before the first detection.
  void setCameras(const std::vector<PublishedCamera>& cameras);

  void onFrame(const ObservedFrame& frame, TimePoint now);
  // Zone events outside a frame (a tracked camera stops: its persons leave), at `time`.
  void onZoneEvents(std::string_view camera, const std::vector<ZoneEvent>& events,
                    const std::vector<TrackedPerson>& persons, TimePoint time);
  // Ends events whose clear_after passed without frames (camera lost, detector stalled).
  // `now` on the monotonic clock, as presence measures every duration.
  void tick(std::chrono::steady_clock::time_point now);
  // Ends every open event (clean stop); the caller then publishes status offline.
  void endAll(TimePoint now);

  // Publishes status online, the discovery configs, and every camera's and zone's current
  // state, count and latest snapshot. Call it after every reconnect (a restarted broker may
  // have lost the retained messages).
  void announce();
  // The daemon's status attributes (a JSON object, see BackendStatus::json()): published retained
  // now (once announced) and again by every announce().
  void setStatusAttributes(std::string json) {
    availability_.setAttributes(std::move(json), announced_);
  }
  // The camera delivers frames (true) or is lost (false); publishes <camera>/status on a
  // change. Unknown cameras are ignored.
  void setCameraAvailable(std::string_view camera, bool available);
  // Home Assistant's birth message: re-announce when it says "online".
  void onHomeAssistantStatus(std::string_view payload);

  std::string statusTopic() const { return availability_.statusTopic(); }
  std::string homeAssistantStatusTopic() const { return ha_.statusTopic(); }

  // For metrics and the status API; nullopt for an unknown camera.
  std::optional<PresenceTracker::State> state(std::string_view camera,
                                              std::string_view zone = {}) const;
  std::uint64_t eventsPublished() const { return presenceMessages_.eventsPublished(); }
  std::uint64_t snapshotsPublished() const { return presenceMessages_.snapshotsPublished(); }
  // The last events of every camera and zone with their best frames (the page, /api/events).
  const RecentEvents& recentEvents() const { return presenceMessages_.recentEvents(); }
  // Where every event of a camera with `history` on and its pictures are kept (nullptr: only in
  // the recent events). It must outlive the publisher.
  void setRecorder(EventRecorder* recorder) { presenceMessages_.setRecorder(recorder); }
  std::uint64_t zoneEventsPublished() const { return track_.zoneEventsPublished(); }
  // Every configured line's running counts (metrics, the status API).
  const LineCounts& lineCounts() const { return track_.lineCounts(); }

 private:
  struct CameraState {
    PublishedCamera spec;
    std::unique_ptr<PresenceTracker> tracker;
    EventSnapshot snapshot;  // the best frame of the open event or streak
    int width = 0;           // of the latest frame
    int height = 0;
    std::string backend;  // of the latest frame: an event that ends by time names it too
  };

  CameraState& addCamera(const PublishedCamera& spec);
  void endAll(CameraState& camera, TimePoint now);
  // The camera's events_ (and the backend of `frame`, nullptr: none) to presenceMessages_.
  void publishEvents(CameraState& camera, const ObservedFrame* frame, TimePoint now);
  void publishState(const CameraState& camera, const std::string& zone);
  void clearCamera(const CameraState& camera);
  void send(std::string topic, std::string payload, bool retained);

  EventPublisherSettings settings_;
  MessageSink* sink_;
  AvailabilityMessages availability_;  // the daemon's and the cameras' status
  std::map<std::string, CameraState, std::less<>> cameras_;
  std::vector<PresenceEvent> events_;  // reused
  FramePresence presence_;
  bool announced_ = false;
  PresenceMessages presenceMessages_;  // presence's states, events and snapshots
  HaEntities ha_;                      // Home Assistant's discovery configs
  TrackMessages track_;                // zone events, loitering, line crossings and counts
};

}  // namespace vigil
