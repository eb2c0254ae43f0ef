#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon/base/error.h"
#include "daemon/events/event_json.h"
#include "daemon/events/event_recorder.h"

struct sqlite3;

namespace vigil {

// Which events a page of the history holds: newest first, `limit` of them.
struct EventQuery {
  std::string camera;               // empty: every camera
  std::optional<std::string> zone;  // nullopt: camera-wide and zone events; else that zone's
  std::optional<std::chrono::system_clock::time_point> since;  // started at or after
  std::optional<std::chrono::system_clock::time_point> until;  // started before
  std::string before;  // an event's id: only events older than it (the next page); empty: none
  int limit = 50;
};

// An event as the history keeps it, with its pictures' files (relative to the pictures'
// directory; empty: none).
struct StoredEvent {
  EventRecord event;
  std::string firstPicture;
  std::string bestPicture;
  EventPictures pictures() const { return {!firstPicture.empty(), !bestPicture.empty()}; }
};

// The history's SQLite database (Debian's libsqlite3): one table of events in WAL mode, each
// commit synced (synchronous=FULL), so a power cut loses no committed event. Errors say
// where and why; a full disk is ErrorCode::kUnavailable (the caller pauses), any other
// failure kBackendFailure.
// Threads: one connection per thread (the writer's and the readers'); SQLite's WAL lets them
// read while it writes.
class HistoryDatabase {
 public:
  // Opens `file` (making it and its tables when new). A file that is not a database or fails
  // SQLite's quick check is moved aside to `<file>.broken-<unix seconds>`, logged at error, and
  // a fresh one started; only a fresh one that fails too is an error.
  static Expected<HistoryDatabase> open(const std::filesystem::path& file);
  // The same file, for reading only (a reader's own connection).
  static Expected<HistoryDatabase> openReader(const std::filesystem::path& file);

  HistoryDatabase(HistoryDatabase&&) noexcept;
  HistoryDatabase& operator=(HistoryDatabase&&) noexcept;
  ~HistoryDatabase();

  Expected<void> begin();
  Expected<void> commit();
  void rollback();

  // Inserts the event, or updates it from its latest state; `updated`: when this state was
  // recorded (the end an interrupted event is given).
  Expected<void> save(const EventRecord& event, std::chrono::system_clock::time_point updated);
  // The event's picture is `file` of `bytes` bytes. The first picture is also its best until
  // a best one is set. Returns the file no event names any more, for the caller to remove: the
  // one the picture replaced, or `file` itself when there is no such event; empty: none.
  Expected<std::string> setPicture(const std::string& eventId, EventPictureKind kind,
                                   const std::string& file, std::int64_t bytes);
  // Events that have no end (the daemon stopped without ending them) end at their last update.
  Expected<int> endInterrupted();

  Expected<std::vector<StoredEvent>> query(const EventQuery& query);
  Expected<std::optional<StoredEvent>> find(const std::string& eventId);

  // Deletes the oldest events, by start, that began before `olderThan`, then more until the
  // kept pictures and the database together fit `maxBytes`.
  struct Pruned {
    int events = 0;
    std::vector<std::string> files;  // the deleted events' pictures, for the caller to remove
  };
  Expected<Pruned> prune(std::chrono::system_clock::time_point olderThan, std::int64_t maxBytes);
  // The database file's and the kept pictures' bytes.
  Expected<std::int64_t> bytes();
  Expected<std::int64_t> eventCount();

 private:
  explicit HistoryDatabase(sqlite3* db, std::filesystem::path file);
  Expected<void> exec(const char* sql);

  sqlite3* db_ = nullptr;
  std::filesystem::path file_;
};

}  // namespace vigil
