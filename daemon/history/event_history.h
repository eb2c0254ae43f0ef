#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "daemon/base/error.h"
#include "daemon/base/figures.h"
#include "daemon/events/event_recorder.h"
#include "daemon/history/history_database.h"
#include "daemon/history/picture_files.h"

namespace vigil {

struct HistoryOptions {
  std::filesystem::path dir;  // events.db and pictures/ (the state directory's history/)
  int retainDays = 14;
  std::int64_t maxBytes = std::int64_t{1024} << 20;
  std::size_t queueCapacity = 256;  // waiting writes; more are dropped and counted
  std::chrono::milliseconds pruneEvery = std::chrono::minutes(1);
  std::chrono::milliseconds retryAfterFull = std::chrono::seconds(30);
};

// The history of events on disk: every event and its pictures, kept across restarts in an
// SQLite database (HistoryDatabase) with the JPEGs as files beside it (PictureFiles), bounded
// by age and size, oldest first.
// Writing never blocks detection: record() and recordPicture() queue (bounded: a full queue
// drops and counts) for one writer thread, which commits what waits at once, so a kill -9 or a
// power cut loses at most what arrived in the last moment. A full disk pauses the history
// (logged, counted, in the status) and it tries again every `retryAfterFull`; detection and MQTT
// go on. An event that was open when the daemon stopped without ending it ends at its last
// update when the history opens again.
// Threads: the control thread records and reads (query, find: a connection of its own); the
// writer thread writes and prunes; figures are atomics.
class EventHistory final : public EventRecorder {
 public:
  static Expected<std::unique_ptr<EventHistory>> open(HistoryOptions options);
  ~EventHistory() override;  // writes what waits, then stops the writer
  EventHistory(const EventHistory&) = delete;
  EventHistory& operator=(const EventHistory&) = delete;

  void record(const EventRecord& event) override;
  void recordPicture(const std::string& eventId, EventPictureKind kind,
                     const std::string& jpeg) override;

  Expected<std::vector<StoredEvent>> query(const EventQuery& query);
  Expected<std::optional<StoredEvent>> find(const std::string& eventId);
  // The picture's file (empty when the event has none of that kind).
  std::filesystem::path picture(const StoredEvent& event, EventPictureKind kind) const;

  // Why the history is paused (e.g. the disk is full); empty while it writes.
  std::string pausedReason() const;
  // Waits until everything recorded so far is written or dropped (tests, a clean stop).
  void flush();
  // history_events_written_total, _dropped_total, _pictures_written_total, _pruned_total,
  // _paused (0/1), _bytes.
  void report(FigureWriter& out) const;

 private:
  struct Write {
    std::optional<EventRecord> event;  // else a picture
    std::string eventId;
    EventPictureKind kind = EventPictureKind::kBest;
    std::string jpeg;
    std::chrono::system_clock::time_point at;
  };

  EventHistory(HistoryOptions options, HistoryDatabase writer, HistoryDatabase reader);
  void push(Write write);
  void run();
  // One batch in one transaction; its error when it failed (nothing of it kept).
  Expected<void> writeBatch(std::vector<Write>& batch, std::vector<std::string>& replaced);
  // A batch was not written: logged; a full disk (kUnavailable) also pauses the history.
  void onWriteFailed(const Error& error);
  void prune();

  HistoryOptions options_;
  PictureFiles pictures_;
  HistoryDatabase writer_;  // the writer thread's
  std::mutex readMutex_;
  HistoryDatabase reader_;  // the control thread's

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<Write> queue_;
  bool writing_ = false;
  bool stop_ = false;
  std::string pausedReason_;
  std::chrono::steady_clock::time_point retryAt_;

  std::atomic<std::uint64_t> eventsWritten_{0};
  std::atomic<std::uint64_t> picturesWritten_{0};
  std::atomic<std::uint64_t> dropped_{0};
  std::atomic<std::uint64_t> pruned_{0};
  std::atomic<std::int64_t> bytes_{0};
  std::thread thread_;
};

}  // namespace vigil
