#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "daemon/events/event_recorder.h"
#include "daemon/events/event_snapshot.h"
#include "daemon/events/message_sink.h"
#include "daemon/events/observed_frame.h"
#include "daemon/events/presence_tracker.h"
#include "daemon/events/recent_events.h"

namespace vigil {

// The messages presence makes (EventPublisher's topics): for each new, update and end event the
// camera's or zone's retained person and count states, the event JSON and its log line, its
// entry in the page's recent events and in the history (the recorder), and the event's best
// frame as its picture (to the recent events and the history, and retained on MQTT with
// `snapshots` on). A new event's picture goes out before its ON and its `new` message, so an
// automation that fires on ON finds the new event's picture retained. Topics under
// `topicPrefix`; messages go to `sink` (nullptr: none); `node` names the box in the event JSON.
// Threads: the control thread.
class PresenceMessages {
 public:
  using TimePoint = std::chrono::system_clock::time_point;

  PresenceMessages(std::string topicPrefix, std::string node, bool snapshots, MessageSink* sink);

  // Where events and their pictures are kept (nullptr: nowhere but the recent events).
  void setRecorder(EventRecorder* recorder) { recorder_ = recorder; }

  // One camera's events, published at `now`. `frame` made them (nullptr: time or a stop ended
  // them, which has no latency and no persons); `backend` is the one of the camera's latest
  // frame; `snapshot` its best frame, encoded here when a camera-wide event first shows it.
  // `history`: the camera's events go to the recorder.
  void publishEvents(const std::string& camera, const std::vector<PresenceEvent>& events,
                     EventSnapshot& snapshot, const std::string& backend,
                     const ObservedFrame* frame, TimePoint now, bool history);
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
  // The event's picture: the camera's best frame, encoded when due, or for a zone's new event the
  // camera event's; to the events list, the recorder (`history`) and, with snapshots on, MQTT.
  // True when the event has one.
  bool publishPicture(const std::string& camera, const PresenceEvent& event,
                      EventSnapshot& snapshot, bool history);
  void send(std::string topic, std::string payload, bool retained);

  std::string prefix_;
  std::string node_;
  bool snapshots_;
  MessageSink* sink_;
  EventRecorder* recorder_ = nullptr;
  RecentEvents recent_;
  std::uint64_t eventsPublished_ = 0;
  std::uint64_t snapshotsPublished_ = 0;
};

}  // namespace vigil
