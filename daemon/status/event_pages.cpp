#include "daemon/status/event_pages.h"

#include <fmt/format.h>
#include <time.h>

#include <charconv>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "daemon/status/status_responses.h"

namespace vigil {

namespace {

constexpr int kMaxLimit = 500;

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percentDecoded(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%' && i + 2 < text.size() && hexValue(text[i + 1]) >= 0 &&
               hexValue(text[i + 2]) >= 0) {
      out += static_cast<char>(hexValue(text[i + 1]) * 16 + hexValue(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

tl::unexpected<Error> badParameter(std::string_view name, std::string_view value,
                                   std::string_view why) {
  return makeError(ErrorCode::kInvalidArgument, "/api/events: {}='{}': {}", name, value, why);
}

// "+01:00", "-0530", "Z" or nothing (UTC): the offset from UTC in seconds; nullopt: not one.
std::optional<long> utcOffset(std::string_view zone) {
  if (zone.empty() || zone == "Z") return 0;
  int hours = 0;
  int minutes = 0;
  const char sign = zone.front();
  const std::string rest(zone.substr(1));
  if ((sign != '+' && sign != '-') ||
      (std::sscanf(rest.c_str(), "%2d:%2d", &hours, &minutes) != 2 &&
       std::sscanf(rest.c_str(), "%2d%2d", &hours, &minutes) != 2)) {
    return std::nullopt;
  }
  return (sign == '-' ? -1 : 1) * (hours * 3600L + minutes * 60L);
}

HttpResponse errorResponse(const Error& error) {
  return plainResponse(error.code == ErrorCode::kInvalidArgument ? 400 : 500, error.message + "\n");
}

}  // namespace

Expected<std::chrono::system_clock::time_point> parseTime(const std::string& text) {
  using namespace std::chrono;
  double unix = 0;
  if (auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), unix);
      ec == std::errc() && end == text.data() + text.size()) {
    return system_clock::time_point(duration_cast<system_clock::duration>(duration<double>(unix)));
  }
  std::tm tm{};
  double seconds = 0;
  int used = 0;
  const int fields =
      std::sscanf(text.c_str(), "%4d-%2d-%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &used);
  if (fields != 3) return makeError(ErrorCode::kInvalidArgument, "not a date or time");
  std::string_view rest = std::string_view(text).substr(static_cast<std::size_t>(used));
  if (!rest.empty() && (rest.front() == 'T' || rest.front() == ' ')) {
    int n = 0;
    const std::string clock(rest.substr(1));
    if (std::sscanf(clock.c_str(), "%2d:%2d:%lf%n", &tm.tm_hour, &tm.tm_min, &seconds, &n) != 3 &&
        std::sscanf(clock.c_str(), "%2d:%2d%n", &tm.tm_hour, &tm.tm_min, &n) != 2) {
      return makeError(ErrorCode::kInvalidArgument, "not a time of day after the date");
    }
    rest = rest.substr(1 + static_cast<std::size_t>(n));
  }
  const auto offset = utcOffset(rest);
  if (!offset) return makeError(ErrorCode::kInvalidArgument, "'{}' is not a time zone", rest);
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  const std::time_t utc = timegm(&tm) - *offset;
  return system_clock::from_time_t(utc) +
         duration_cast<system_clock::duration>(duration<double>(seconds));
}

Expected<EventQuery> eventQueryOf(const std::string& query) {
  EventQuery q;
  std::istringstream parts(query);
  std::string part;
  while (std::getline(parts, part, '&')) {
    if (part.empty()) continue;
    const std::size_t eq = part.find('=');
    const std::string name = percentDecoded(part.substr(0, eq));
    const std::string value = eq == std::string::npos ? "" : percentDecoded(part.substr(eq + 1));
    if (name == "camera") {
      q.camera = value;
    } else if (name == "zone") {
      q.zone = value;
    } else if (name == "before") {
      q.before = value;
    } else if (name == "since" || name == "until") {
      auto time = parseTime(value);
      if (!time) return badParameter(name, value, time.error().message);
      (name == "since" ? q.since : q.until) = *time;
    } else if (name == "limit") {
      int limit = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), limit);
      if (ec != std::errc() || end != value.data() + value.size() || limit < 1 ||
          limit > kMaxLimit) {
        return badParameter(name, value, fmt::format("a number from 1 to {}", kMaxLimit));
      }
      q.limit = limit;
    }
    // Other parameters (a cache-buster) are ignored.
  }
  return q;
}

HttpResponse EventPages::list(const std::string& query) const {
  auto q = eventQueryOf(query);
  if (!q) return errorResponse(q.error());
  if (history_ == nullptr) return jsonResponse(recent_.json());
  auto events = history_->query(*q);
  if (!events) return errorResponse(events.error());
  nlohmann::json out = nlohmann::json::array();
  for (const StoredEvent& e : *events) out.push_back(eventRecordJson(e.event, e.pictures()));
  return jsonResponse(out);
}

HttpResponse EventPages::event(const std::string& subpath) const {
  const std::size_t slash = subpath.find('/');
  if (slash != std::string::npos)
    return picture(subpath.substr(0, slash), subpath.substr(slash + 1));
  if (subpath.empty()) return plainResponse(404, "try /api/events or /api/events/<id>\n");
  if (history_ != nullptr) {
    auto kept = history_->find(subpath);
    if (!kept) return errorResponse(kept.error());
    if (*kept) return jsonResponse(eventRecordJson((*kept)->event, (*kept)->pictures()));
  }
  if (const RecentEvents::Entry* recent = recent_.find(subpath)) {
    return jsonResponse(eventRecordJson(*recent, recent->pictures()));
  }
  return plainResponse(404, fmt::format("no event '{}' is kept\n", subpath));
}

HttpResponse EventPages::picture(const std::string& id, const std::string& name) const {
  if (id.empty() || (name != "snapshot.jpg" && name != "first.jpg")) {
    return plainResponse(404, "try /api/events/<id>/snapshot.jpg or /api/events/<id>/first.jpg\n");
  }
  const EventPictureKind kind =
      name == "first.jpg" ? EventPictureKind::kFirst : EventPictureKind::kBest;
  HttpResponse r;
  r.contentType = "image/jpeg";
  r.headers.emplace_back("Cache-Control", "max-age=60");
  // The history's file; a picture of this moment may still wait for the history's writer, and
  // the recent events hold it meanwhile.
  if (auto kept = keptPicture(id, kind)) {
    r.body = std::move(*kept);
    return r;
  }
  const RecentEvents::Entry* event = recent_.find(id);
  if (event == nullptr || event->snapshotJpeg.empty() || kind == EventPictureKind::kFirst) {
    return plainResponse(404, fmt::format("no {} kept of an event '{}'\n", name, id));
  }
  r.body = event->snapshotJpeg;
  return r;
}

std::optional<std::string> EventPages::keptPicture(const std::string& id,
                                                   EventPictureKind kind) const {
  if (history_ == nullptr) return std::nullopt;
  auto event = history_->find(id);
  if (!event || !*event) return std::nullopt;
  const std::filesystem::path file = history_->picture(**event, kind);
  std::ifstream in(file, std::ios::binary);
  if (file.empty() || !in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace vigil
