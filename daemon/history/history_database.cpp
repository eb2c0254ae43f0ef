#include "daemon/history/history_database.h"

#include <sqlite3.h>

#include <nlohmann/json.hpp>
#include <utility>

#include "daemon/base/log.h"

namespace vigil {

namespace {

using Clock = std::chrono::system_clock;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS events(
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  camera TEXT NOT NULL,
  zone TEXT NOT NULL,
  start_ms INTEGER NOT NULL,
  end_ms INTEGER,
  updated_ms INTEGER NOT NULL,
  count INTEGER NOT NULL,
  max_count INTEGER NOT NULL,
  max_score REAL NOT NULL,
  track_ids TEXT NOT NULL,
  backend TEXT NOT NULL,
  first_picture TEXT NOT NULL DEFAULT '',
  first_bytes INTEGER NOT NULL DEFAULT 0,
  best_picture TEXT NOT NULL DEFAULT '',
  best_bytes INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS events_by_start ON events(start_ms, seq);
CREATE INDEX IF NOT EXISTS events_by_camera ON events(camera, start_ms, seq);
)sql";

constexpr const char* kColumns =
    "id, camera, zone, start_ms, end_ms, count, max_count, max_score, track_ids, backend, "
    "first_picture, best_picture";

std::int64_t unixMs(Clock::time_point t) {
  return std::chrono::floor<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

Clock::time_point ofUnixMs(std::int64_t ms) {
  return Clock::time_point(std::chrono::milliseconds(ms));
}

// A full disk pauses the history; anything else is a failure of the database.
tl::unexpected<Error> sqliteError(sqlite3* db, std::string_view doing) {
  const int code = sqlite3_errcode(db);
  return makeError(code == SQLITE_FULL ? ErrorCode::kUnavailable : ErrorCode::kBackendFailure,
                   "history database {}: {} ({})", doing, sqlite3_errmsg(db),
                   code == SQLITE_FULL ? "disk full" : sqlite3_errstr(code));
}

// One prepared statement; binds by position from 1, steps, reads columns from 0.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) stmt_ = nullptr;
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  bool ok() const { return stmt_ != nullptr; }
  Statement& bind(int i, std::int64_t v) {
    sqlite3_bind_int64(stmt_, i, v);
    return *this;
  }
  Statement& bind(int i, double v) {
    sqlite3_bind_double(stmt_, i, v);
    return *this;
  }
  Statement& bind(int i, const std::string& v) {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& bindNull(int i) {
    sqlite3_bind_null(stmt_, i);
    return *this;
  }
  // Ready to step again, with new bindings.
  Statement& reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    return *this;
  }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int step() { return sqlite3_step(stmt_); }
  std::int64_t integer(int i) const { return sqlite3_column_int64(stmt_, i); }
  bool null(int i) const { return sqlite3_column_type(stmt_, i) == SQLITE_NULL; }
  std::string text(int i) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, i));
    return p != nullptr ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, i)))
                        : std::string();
  }
  double real(int i) const { return sqlite3_column_double(stmt_, i); }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

// Reads kColumns from `s`'s row.
StoredEvent storedEvent(const Statement& s) {
  StoredEvent out;
  EventRecord& e = out.event;
  e.id = s.text(0);
  e.camera = s.text(1);
  e.zone = s.text(2);
  e.start = ofUnixMs(s.integer(3));
  if (!s.null(4)) e.end = ofUnixMs(s.integer(4));
  e.count = static_cast<int>(s.integer(5));
  e.maxCount = static_cast<int>(s.integer(6));
  e.maxScore = static_cast<float>(s.real(7));
  const auto ids = nlohmann::json::parse(s.text(8), nullptr, false);
  if (ids.is_array()) {
    for (const auto& id : ids) {
      if (id.is_number_unsigned()) e.trackIds.push_back(id.get<std::uint64_t>());
    }
  }
  e.backend = s.text(9);
  out.firstPicture = s.text(10);
  out.bestPicture = s.text(11);
  return out;
}

sqlite3* openConnection(const std::filesystem::path& file, int flags) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(file.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return nullptr;
  }
  sqlite3_busy_timeout(db, 2000);
  return db;
}

// Opens and checks the file, makes the tables; nullptr and why when it is unusable, with
// `damaged` set when the file's content is at fault (not a database, corrupt) rather than
// the process (permissions, a missing directory).
sqlite3* openChecked(const std::filesystem::path& file, std::string& why, bool& damaged) {
  sqlite3* db = openConnection(file, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (db == nullptr) {
    why = "cannot open it";
    return nullptr;
  }
  bool healthy = false;
  {  // finalized before the journal mode changes: no statement may hold a read open then
    Statement check(db, "PRAGMA quick_check");
    const int rc = check.ok() ? check.step() : sqlite3_errcode(db);
    healthy = rc == SQLITE_ROW && check.text(0) == "ok";
    // A report of damage, or a file SQLite does not take for a database at all.
    damaged = rc == SQLITE_ROW ? !healthy : rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT;
    if (!healthy) why = rc == SQLITE_ROW ? "it fails SQLite's quick check" : sqlite3_errmsg(db);
  }
  if (healthy && (sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;", nullptr,
                               nullptr, nullptr) != SQLITE_OK ||
                  sqlite3_exec(db, kSchema, nullptr, nullptr, nullptr) != SQLITE_OK)) {
    why = sqlite3_errmsg(db);
    damaged = sqlite3_errcode(db) == SQLITE_NOTADB || sqlite3_errcode(db) == SQLITE_CORRUPT;
    healthy = false;
  }
  if (healthy) return db;
  sqlite3_close(db);
  return nullptr;
}

}  // namespace

HistoryDatabase::HistoryDatabase(sqlite3* db, std::filesystem::path file)
    : db_(db), file_(std::move(file)) {}

HistoryDatabase::HistoryDatabase(HistoryDatabase&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), file_(std::move(other.file_)) {}

HistoryDatabase& HistoryDatabase::operator=(HistoryDatabase&& other) noexcept {
  std::swap(db_, other.db_);
  std::swap(file_, other.file_);
  return *this;
}

HistoryDatabase::~HistoryDatabase() { sqlite3_close(db_); }

Expected<HistoryDatabase> HistoryDatabase::open(const std::filesystem::path& file) {
  std::string why;
  bool damaged = false;
  if (sqlite3* db = openChecked(file, why, damaged)) return HistoryDatabase(db, file);
  if (!damaged) {
    return makeError(ErrorCode::kPermissionDenied, "history database {}: {}", file.string(), why);
  }
  // Moved aside, never deleted: whoever wants the old events may still read them.
  const auto stamp =
      std::chrono::duration_cast<std::chrono::seconds>(Clock::now().time_since_epoch()).count();
  std::filesystem::path aside = file;
  aside += ".broken-" + std::to_string(stamp);
  std::error_code ec;
  std::filesystem::rename(file, aside, ec);
  for (const char* suffix : {"-wal", "-shm"}) {
    std::filesystem::path side = file;
    side += suffix;
    std::filesystem::path sideAside = aside;
    sideAside += suffix;
    std::filesystem::rename(side, sideAside, ec);
  }
  logger("history")->error(
      "history database {} cannot be used ({}): moved aside to {}, a new one is started; the "
      "events kept in it are no longer shown",
      file.string(), why, aside.string());
  std::string again;
  if (sqlite3* db = openChecked(file, again, damaged)) return HistoryDatabase(db, file);
  return makeError(ErrorCode::kBackendFailure, "history database {}: {}", file.string(), again);
}

Expected<HistoryDatabase> HistoryDatabase::openReader(const std::filesystem::path& file) {
  sqlite3* db = openConnection(file, SQLITE_OPEN_READONLY);
  if (db == nullptr) {
    return makeError(ErrorCode::kBackendFailure, "history database {}: cannot open it to read",
                     file.string());
  }
  return HistoryDatabase(db, file);
}

Expected<void> HistoryDatabase::exec(const char* sql) {
  if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) {
    return sqliteError(db_, sql);
  }
  return {};
}

Expected<void> HistoryDatabase::begin() { return exec("BEGIN IMMEDIATE"); }
Expected<void> HistoryDatabase::commit() { return exec("COMMIT"); }
void HistoryDatabase::rollback() { sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr); }

Expected<void> HistoryDatabase::save(const EventRecord& e, Clock::time_point updated) {
  Statement s(db_,
              "INSERT INTO events(id, camera, zone, start_ms, end_ms, updated_ms, count, "
              "max_count, max_score, track_ids, backend) VALUES(?,?,?,?,?,?,?,?,?,?,?) "
              "ON CONFLICT(id) DO UPDATE SET end_ms=excluded.end_ms, "
              "updated_ms=excluded.updated_ms, count=excluded.count, "
              "max_count=excluded.max_count, max_score=excluded.max_score, "
              "track_ids=excluded.track_ids, backend=excluded.backend");
  if (!s.ok()) return sqliteError(db_, "cannot prepare the save");
  s.bind(1, e.id).bind(2, e.camera).bind(3, e.zone).bind(4, unixMs(e.start));
  if (e.end) {
    s.bind(5, unixMs(*e.end));
  } else {
    s.bindNull(5);
  }
  s.bind(6, unixMs(updated))
      .bind(7, std::int64_t{e.count})
      .bind(8, std::int64_t{e.maxCount})
      .bind(9, static_cast<double>(e.maxScore))
      .bind(10, nlohmann::json(e.trackIds).dump())
      .bind(11, e.backend);
  if (s.step() != SQLITE_DONE) return sqliteError(db_, "cannot save an event");
  return {};
}

Expected<std::string> HistoryDatabase::setPicture(const std::string& eventId, EventPictureKind kind,
                                                  const std::string& file, std::int64_t bytes) {
  Statement old(db_, "SELECT first_picture, best_picture FROM events WHERE id=?");
  if (!old.ok()) return sqliteError(db_, "cannot prepare a picture's update");
  old.bind(1, eventId);
  if (old.step() != SQLITE_ROW) return file;  // no such event (dropped or pruned meanwhile)
  const std::string first = old.text(0);
  const std::string best = old.text(1);
  const bool isFirst = kind == EventPictureKind::kFirst;
  Statement s(db_, isFirst ? "UPDATE events SET first_picture=?1, first_bytes=?2, best_picture="
                             "CASE best_picture WHEN '' THEN ?1 ELSE best_picture END WHERE id=?3"
                           : "UPDATE events SET best_picture=?1, best_bytes=?2 WHERE id=?3");
  if (!s.ok()) return sqliteError(db_, "cannot prepare a picture's update");
  s.bind(1, file).bind(2, bytes).bind(3, eventId);
  if (s.step() != SQLITE_DONE) return sqliteError(db_, "cannot record a picture");
  // The file no row names any more (a best picture a better one replaced).
  const std::string& before = isFirst ? first : best;
  const std::string& other = isFirst ? best : first;
  return before != file && before != other ? before : std::string();
}

Expected<int> HistoryDatabase::endInterrupted() {
  if (auto ok = exec("UPDATE events SET end_ms=updated_ms, count=0 WHERE end_ms IS NULL"); !ok) {
    return tl::unexpected(ok.error());
  }
  return sqlite3_changes(db_);
}

Expected<std::vector<StoredEvent>> HistoryDatabase::query(const EventQuery& q) {
  std::string sql = fmt::format("SELECT {} FROM events WHERE 1", kColumns);
  if (!q.camera.empty()) sql += " AND camera=?1";
  if (q.zone) sql += " AND zone=?2";
  if (q.since) sql += " AND start_ms>=?3";
  if (q.until) sql += " AND start_ms<?4";
  if (!q.before.empty()) {
    sql += " AND (start_ms, seq) < (SELECT start_ms, seq FROM events WHERE id=?5)";
  }
  sql += " ORDER BY start_ms DESC, seq DESC LIMIT ?6";
  Statement s(db_, sql);
  if (!s.ok()) return sqliteError(db_, "cannot prepare a query");
  if (!q.camera.empty()) s.bind(1, q.camera);
  if (q.zone) s.bind(2, *q.zone);
  if (q.since) s.bind(3, unixMs(*q.since));
  if (q.until) s.bind(4, unixMs(*q.until));
  if (!q.before.empty()) s.bind(5, q.before);
  s.bind(6, std::int64_t{q.limit});
  std::vector<StoredEvent> out;
  int rc = SQLITE_ROW;
  while ((rc = s.step()) == SQLITE_ROW) out.push_back(storedEvent(s));
  if (rc != SQLITE_DONE) return sqliteError(db_, "cannot read events");
  return out;
}

Expected<std::optional<StoredEvent>> HistoryDatabase::find(const std::string& eventId) {
  Statement s(db_, fmt::format("SELECT {} FROM events WHERE id=?", kColumns));
  if (!s.ok()) return sqliteError(db_, "cannot prepare a query");
  s.bind(1, eventId);
  const int rc = s.step();
  if (rc == SQLITE_ROW) return std::optional<StoredEvent>(storedEvent(s));
  if (rc != SQLITE_DONE) return sqliteError(db_, "cannot read an event");
  return std::optional<StoredEvent>();
}

Expected<HistoryDatabase::Pruned> HistoryDatabase::prune(Clock::time_point olderThan,
                                                         std::int64_t maxBytes) {
  auto total = bytes();
  if (!total) return tl::unexpected(total.error());
  std::int64_t over = *total - maxBytes;
  Statement s(db_,
              "SELECT seq, first_picture, best_picture, first_bytes + best_bytes, start_ms "
              "FROM events ORDER BY start_ms, seq");
  Statement remove(db_, "DELETE FROM events WHERE seq=?");
  if (!s.ok() || !remove.ok()) return sqliteError(db_, "cannot prepare the prune");
  // Deleted after the walk: SQLite's reading statement may not see rows vanish under it.
  Pruned out;
  std::vector<std::string>& files = out.files;
  std::vector<std::int64_t> doomed;
  const std::int64_t oldest = unixMs(olderThan);
  while (s.step() == SQLITE_ROW && (s.integer(4) < oldest || over > 0)) {
    doomed.push_back(s.integer(0));
    for (int column : {1, 2}) {
      std::string file = s.text(column);
      if (!file.empty() && (files.empty() || files.back() != file)) files.push_back(file);
    }
    // A row's own bytes; the database file shrinks only when SQLite reuses its pages.
    over -= s.integer(3);
  }
  if (doomed.empty()) return out;
  if (auto ok = begin(); !ok) return tl::unexpected(ok.error());
  for (std::int64_t seq : doomed) {
    remove.reset().bind(1, seq);
    if (remove.step() != SQLITE_DONE) {
      auto error = sqliteError(db_, "cannot delete an old event");
      rollback();
      return error;
    }
  }
  if (auto ok = commit(); !ok) return tl::unexpected(ok.error());
  out.events = static_cast<int>(doomed.size());
  return out;
}

Expected<std::int64_t> HistoryDatabase::bytes() {
  Statement pictures(db_, "SELECT COALESCE(SUM(first_bytes + best_bytes), 0) FROM events");
  Statement pages(db_, "SELECT page_count * page_size FROM pragma_page_count, pragma_page_size");
  if (!pictures.ok() || !pages.ok() || pictures.step() != SQLITE_ROW ||
      pages.step() != SQLITE_ROW) {
    return sqliteError(db_, "cannot measure its size");
  }
  return pictures.integer(0) + pages.integer(0);
}

Expected<std::int64_t> HistoryDatabase::eventCount() {
  Statement s(db_, "SELECT COUNT(*) FROM events");
  if (!s.ok() || s.step() != SQLITE_ROW) return sqliteError(db_, "cannot count the events");
  return s.integer(0);
}

}  // namespace vigil
