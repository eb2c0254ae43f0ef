#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "daemon/events/event_snapshot.h"
#include "daemon/events/message_sink.h"
#include "daemon/events/observed_frame.h"
#include "daemon/events/presence_tracker.h"
#include "daemon/events/recent_events.h"

namespace vigil {

// The messages presence makes (EventPublisher's topics): for each new, update and end event the
// camera's or zone's retained person and count states, the event JSON and its log line, its
// entry in the page's recent events, and the event's best frame as its snapshot (to the recent
// events, and retained on MQTT with `snapshots` on). Topics under `topicPrefix`; messages go to
// `sink` (nullptr: none).
// Threads: the control thread.
class PresenceMessages {
 public:
  using TimePoint = std::chrono::system_clock::time_point;

  PresenceMessages(std::string topicPrefix, bool snapshots, MessageSink* sink);

  // One camera's events, published at `now`. `frame` made them (nullptr: time or a stop ended
  // them, which has no latency and no persons); `backend` is the one of the camera's latest
  // frame; `snapshot` its best frame, encoded here when a camera-wide event first shows it.
  void publishEvents(const std::string& camera, const std::vector<PresenceEvent>& events,
                     EventSnapshot& snapshot, const std::string& backend,
                     const ObservedFrame* frame, TimePoint now);
  // The retained person and count state of the camera (`zone` empty) or of its zone.
  void publishState(const std::string& camera, const std::string& zone,
                    const PresenceTracker::State& state);
  // The camera's latest snapshot again, retained, with snapshots on and one made (announce()).
  void republishSnapshot(const std::string& camera, const EventSnapshot& snapshot);

  std::uint64_t eventsPublished() const { return eventsPublished_; }
  std::uint64_t snapshotsPublished() const { return snapshotsPublished_; }
  // The last events of every camera and zone with their best frames (the page, /api/events).
  const RecentEvents& recentEvents() const { return recent_; }

 private:
  // The camera's best frame, encoded, to the event's entry in the events list and, with
  // snapshots on, to MQTT.
  void publishSnapshot(const std::string& camera, const std::string& jpeg,
                       const std::string& eventId);
  void send(std::string topic, std::string payload, bool retained);

  std::string prefix_;
  bool snapshots_;
  MessageSink* sink_;
  RecentEvents recent_;
  std::uint64_t eventsPublished_ = 0;
  std::uint64_t snapshotsPublished_ = 0;
};

}  // namespace vigil
