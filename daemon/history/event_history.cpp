#include "daemon/history/event_history.h"

#include <utility>

#include "daemon/base/log.h"
#include "daemon/base/thread_name.h"

namespace vigil {

namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr FigureName kEventsWritten{"events_written", "vigil_history_events_written_total",
                                    "Event states the history wrote to its database."};
constexpr FigureName kPicturesWritten{"pictures_written", "vigil_history_pictures_written_total",
                                      "Event pictures the history wrote to disk."};
constexpr FigureName kDropped{"dropped", "vigil_history_dropped_total",
                              "Event states and pictures the history did not keep: its queue "
                              "was full, it was paused, or a write failed."};
constexpr FigureName kPruned{"pruned", "vigil_history_pruned_events_total",
                             "Events the history deleted for their age or its size limit."};
constexpr FigureName kPaused{"paused", "vigil_history_paused",
                             "1 while the history does not write (the disk is full), else 0."};
constexpr FigureName kBytes{"bytes", "vigil_history_bytes",
                            "Bytes the history's database and pictures take."};

}  // namespace

Expected<std::unique_ptr<EventHistory>> EventHistory::open(HistoryOptions options) {
  std::error_code ec;
  std::filesystem::create_directories(options.dir / "pictures", ec);
  if (ec) {
    return makeError(ErrorCode::kPermissionDenied, "history: cannot make {}: {}",
                     (options.dir / "pictures").string(), ec.message());
  }
  const std::filesystem::path file = options.dir / "events.db";
  auto writer = HistoryDatabase::open(file);
  if (!writer) return tl::unexpected(writer.error());
  if (auto ended = writer->endInterrupted(); !ended) {
    return tl::unexpected(ended.error());
  } else if (*ended > 0) {
    logger("history")->warn(
        "history: {} event(s) were open when the daemon stopped without ending them: they end "
        "at their last update",
        *ended);
  }
  auto reader = HistoryDatabase::openReader(file);
  if (!reader) return tl::unexpected(reader.error());
  return std::unique_ptr<EventHistory>(
      new EventHistory(std::move(options), std::move(*writer), std::move(*reader)));
}

EventHistory::EventHistory(HistoryOptions options, HistoryDatabase writer, HistoryDatabase reader)
    : options_(std::move(options)),
      pictures_(options_.dir / "pictures"),
      writer_(std::move(writer)),
      reader_(std::move(reader)) {
  thread_ = std::thread([this] { run(); });
  nameThread(thread_, "vigil-history");
}

EventHistory::~EventHistory() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void EventHistory::push(Write write) {
  {
    std::lock_guard lock(mutex_);
    if (queue_.size() >= options_.queueCapacity) {
      ++dropped_;
      return;
    }
    queue_.push_back(std::move(write));
  }
  wake_.notify_one();
}

void EventHistory::record(const EventRecord& event) {
  push(Write{event, {}, EventPictureKind::kBest, {}, std::chrono::system_clock::now()});
}

void EventHistory::recordPicture(const std::string& eventId, EventPictureKind kind,
                                 const std::string& jpeg) {
  push(Write{std::nullopt, eventId, kind, jpeg, std::chrono::system_clock::now()});
}

void EventHistory::run() {
  auto nextPrune = SteadyClock::now();
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait_until(lock, nextPrune, [&] { return stop_ || !queue_.empty(); });
    std::vector<Write> batch(std::make_move_iterator(queue_.begin()),
                             std::make_move_iterator(queue_.end()));
    queue_.clear();
    writing_ = true;
    const bool paused = !pausedReason_.empty() && SteadyClock::now() < retryAt_;
    const bool stopping = stop_;
    lock.unlock();
    if (paused) {
      dropped_ += batch.size();
    } else if (!batch.empty()) {
      std::vector<std::string> unnamed;
      if (auto ok = writeBatch(batch, unnamed); !ok) {
        dropped_ += batch.size();
        onWriteFailed(ok.error());
      } else if (!pausedReason().empty()) {
        logger("history")->warn("history: writing again");
        std::lock_guard again(mutex_);
        pausedReason_.clear();
      }
      for (const std::string& file : unnamed) pictures_.remove(file);
    }
    if (SteadyClock::now() >= nextPrune) {
      prune();
      nextPrune = SteadyClock::now() + options_.pruneEvery;
    }
    lock.lock();
    writing_ = false;
    idle_.notify_all();
    if (stopping && queue_.empty()) return;
  }
}

Expected<void> EventHistory::writeBatch(std::vector<Write>& batch,
                                        std::vector<std::string>& unnamed) {
  std::vector<std::string> written;  // removed again when the batch fails
  auto failed = [&](const Error& error) {
    writer_.rollback();
    unnamed.insert(unnamed.end(), written.begin(), written.end());
    return tl::unexpected(error);
  };
  if (auto ok = writer_.begin(); !ok) return failed(ok.error());
  std::uint64_t events = 0;
  std::vector<std::string> replaced;
  for (Write& w : batch) {
    if (w.event) {
      if (auto ok = writer_.save(*w.event, w.at); !ok) return failed(ok.error());
      ++events;
      continue;
    }
    auto file = pictures_.write(w.eventId, w.kind, w.jpeg, w.at);
    if (!file) return failed(file.error());
    written.push_back(file->file);
    auto gone = writer_.setPicture(w.eventId, w.kind, file->file, file->bytes);
    if (!gone) return failed(gone.error());
    if (!gone->empty()) replaced.push_back(*gone);
  }
  if (auto ok = writer_.commit(); !ok) return failed(ok.error());
  eventsWritten_ += events;
  picturesWritten_ += written.size();
  for (const Write& w : batch) bytes_ += static_cast<std::int64_t>(w.jpeg.size());
  unnamed.insert(unnamed.end(), replaced.begin(), replaced.end());
  return {};
}

void EventHistory::onWriteFailed(const Error& error) {
  if (error.code != ErrorCode::kUnavailable) {
    logger("history")->error("history: a write failed, its events are not kept: {}", error.message);
    return;
  }
  std::lock_guard lock(mutex_);
  if (pausedReason_.empty()) {
    logger("history")->error(
        "history paused: {}; detection and MQTT go on, the history tries again every {} s",
        error.message, std::chrono::duration<double>(options_.retryAfterFull).count());
  }
  pausedReason_ = error.message;
  retryAt_ = SteadyClock::now() + options_.retryAfterFull;
}

void EventHistory::prune() {
  const auto oldest = std::chrono::system_clock::now() - std::chrono::days(options_.retainDays);
  auto pruned = writer_.prune(oldest, options_.maxBytes);
  if (!pruned) {
    logger("history")->warn("history: cannot delete old events: {}", pruned.error().message);
    return;
  }
  for (const std::string& file : pruned->files) pictures_.remove(file);
  pruned_ += static_cast<std::uint64_t>(pruned->events);
  if (auto count = writer_.bytes()) bytes_ = *count;
  if (pruned->events > 0) {
    logger("history")->debug("history: deleted {} old event(s) and {} picture(s)", pruned->events,
                             pruned->files.size());
  }
}

Expected<std::vector<StoredEvent>> EventHistory::query(const EventQuery& query) {
  std::lock_guard lock(readMutex_);
  return reader_.query(query);
}

Expected<std::optional<StoredEvent>> EventHistory::find(const std::string& eventId) {
  std::lock_guard lock(readMutex_);
  return reader_.find(eventId);
}

std::filesystem::path EventHistory::picture(const StoredEvent& event, EventPictureKind kind) const {
  return pictures_.path(kind == EventPictureKind::kFirst ? event.firstPicture : event.bestPicture);
}

std::string EventHistory::pausedReason() const {
  std::lock_guard lock(mutex_);
  return pausedReason_;
}

void EventHistory::flush() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [&] { return queue_.empty() && !writing_; });
}

void EventHistory::report(FigureWriter& out) const {
  out.count(kEventsWritten, "", eventsWritten_.load());
  out.count(kPicturesWritten, "", picturesWritten_.load());
  out.count(kDropped, "", dropped_.load());
  out.count(kPruned, "", pruned_.load());
  out.level(kPaused, "", pausedReason().empty() ? 0 : 1);
  out.level(kBytes, "", static_cast<double>(bytes_.load()));
}

}  // namespace vigil
