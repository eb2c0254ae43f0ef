#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "daemon/base/error.h"
#include "daemon/events/recent_events.h"
#include "daemon/history/event_history.h"
#include "daemon/web/http_server.h"

namespace vigil {

// /api/events and the events' pictures, from the history on disk (EventHistory) when the daemon
// keeps one, else from the recent events in memory:
//   GET /api/events?camera=&zone=&since=&until=&limit=&before=
//       newest first (eventRecordJson); since and until are ISO 8601 times ("2026-12-07",
//       "2026-12-07T11:40:01Z", "...+01:00") or Unix seconds; limit 1..500 (default 50);
//       before=<event id> gives the page after that event. A bad parameter is a 400 naming it.
//   GET /api/events/<id>                one event (as in the list), 404 when it is not kept
//   GET /api/events/<id>/snapshot.jpg   the event's best picture
//   GET /api/events/<id>/first.jpg      the picture published when it began
// Threads: the control thread (HTTP handlers).
class EventPages {
 public:
  EventPages(EventHistory* history, const RecentEvents& recent)
      : history_(history), recent_(recent) {}

  HttpResponse list(const std::string& query) const;
  // /api/events/<subpath>: an event or one of its pictures.
  HttpResponse event(const std::string& subpath) const;

 private:
  HttpResponse picture(const std::string& id, const std::string& name) const;
  // The picture's bytes from the history; nullopt when it has none (yet).
  std::optional<std::string> keptPicture(const std::string& id, EventPictureKind kind) const;

  EventHistory* history_;  // nullptr: no history (no state directory)
  const RecentEvents& recent_;
};

// The query string of /api/events as a query of the history; the error names the parameter.
Expected<EventQuery> eventQueryOf(const std::string& query);
// "2026-12-07T11:40:01.5Z", "2026-12-07T12:40:01+01:00", "2026-12-07" (UTC midnight) or Unix
// seconds ("1765101601.5").
Expected<std::chrono::system_clock::time_point> parseTime(const std::string& text);

}  // namespace vigil
