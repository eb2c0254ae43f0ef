#include "daemon/events/event_json.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace vigil {

std::string isoUtc(std::chrono::system_clock::time_point time) {
  auto ms = std::chrono::floor<std::chrono::milliseconds>(time.time_since_epoch()).count();
  auto seconds = static_cast<std::time_t>(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
  auto millis = static_cast<int>(ms - static_cast<long long>(seconds) * 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
}

std::string isoUtcOfUnixSeconds(double seconds) {
  return isoUtc(std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::duration<double>(seconds))));
}

namespace {

constexpr int kSchema = 1;

std::string_view typeName(PresenceEventType type) {
  switch (type) {
    case PresenceEventType::kNew:
      return "new";
    case PresenceEventType::kUpdate:
      return "update";
    case PresenceEventType::kEnd:
      return "end";
  }
  return "unknown";
}

// Scores and coordinates with 4 decimals: enough for a box on a 4K frame, and short.
double rounded(double value) { return std::round(value * 10000) / 10000; }

nlohmann::json boxJson(const Box& b, float score) {
  return {{"x", rounded(b.x)},
          {"y", rounded(b.y)},
          {"w", rounded(b.width)},
          {"h", rounded(b.height)},
          {"score", rounded(score)}};
}

const TrackedPerson* find(const std::vector<TrackedPerson>& persons, std::uint64_t id) {
  auto it = std::find_if(persons.begin(), persons.end(),
                         [id](const TrackedPerson& p) { return p.id == id; });
  return it == persons.end() ? nullptr : &*it;
}

// The event's counted persons with their track ids (boxes as the event has them: normalized,
// clipped to the frame).
nlohmann::json personsJson(const PresenceEvent& e, const std::vector<TrackedPerson>& persons) {
  nlohmann::json out = nlohmann::json::array();
  if (e.trackIds.size() != e.boxes.size()) return out;
  for (std::size_t i = 0; i < e.boxes.size(); ++i) {
    nlohmann::json p = boxJson(e.boxes[i].box, e.boxes[i].score);
    p["id"] = e.trackIds[i];
    if (const TrackedPerson* t = find(persons, e.trackIds[i])) {
      p["first_seen"] = isoUtcOfUnixSeconds(t->firstSeen);
      p["stationary"] = t->stationary;
      p["zones"] = t->zones;
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

std::string eventPicturePath(std::string_view eventId, EventPictureKind kind) {
  return fmt::format("/api/events/{}/{}", eventId,
                     kind == EventPictureKind::kFirst ? "first.jpg" : "snapshot.jpg");
}

nlohmann::json eventRecordJson(const EventRecord& e, EventPictures pictures) {
  auto picture = [&](bool kept, EventPictureKind kind) {
    return kept ? nlohmann::json(eventPicturePath(e.id, kind).substr(1)) : nlohmann::json(nullptr);
  };
  return {{"id", e.id},
          {"camera", e.camera},
          {"zone", e.zone.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.zone)},
          {"start", isoUtc(e.start)},
          {"end", e.end ? nlohmann::json(isoUtc(*e.end)) : nlohmann::json(nullptr)},
          {"count", e.count},
          {"max_count", e.maxCount},
          {"max_score", rounded(e.maxScore)},
          {"track_ids", e.trackIds},
          {"backend", e.backend.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.backend)},
          {"snapshot", picture(pictures.best, EventPictureKind::kBest)},
          {"first_picture", picture(pictures.first, EventPictureKind::kFirst)}};
}

std::string presenceEventJson(std::string_view camera, const PresenceEvent& e,
                              const EventSource& source, std::optional<double> latencyMs,
                              const std::vector<TrackedPerson>* persons) {
  const std::string_view backend = source.backend;
  nlohmann::json boxes = nlohmann::json::array();
  for (const Detection& d : e.boxes) boxes.push_back(boxJson(d.box, d.score));
  nlohmann::json j = {
      {"schema", kSchema},
      {"type", typeName(e.type)},
      {"camera", camera},
      {"zone", e.zone.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.zone)},
      {"event_id", e.eventId},
      {"start", isoUtc(e.start)},
      {"end", e.end ? nlohmann::json(isoUtc(*e.end)) : nlohmann::json(nullptr)},
      {"count", e.count},
      {"max_count", std::max(source.maxCount, e.count)},
      {"max_score", rounded(e.maxScore)},
      {"boxes", boxes},
      {"persons", persons != nullptr ? personsJson(e, *persons) : nlohmann::json::array()},
      {"backend", backend.empty() ? nlohmann::json(nullptr) : nlohmann::json(backend)},
      {"node", source.node},
      {"snapshot", source.picture
                       ? nlohmann::json(eventPicturePath(e.eventId, EventPictureKind::kBest))
                       : nlohmann::json(nullptr)},
      {"latency_ms",
       latencyMs ? nlohmann::json(std::round(*latencyMs * 10) / 10) : nlohmann::json(nullptr)},
  };
  return j.dump();
}

std::string zoneEventJson(std::string_view camera, const ZoneEvent& e,
                          std::chrono::system_clock::time_point time, const TrackedPerson* person,
                          int width, int height) {
  nlohmann::json j = {
      {"schema", kSchema},
      {"type", zoneEventName(e.type)},
      {"camera", camera},
      {"zone", e.zone},
      {"track_id", e.trackId},
      {"time", isoUtc(time)},
      {"seconds_inside", std::round(e.secondsInside * 10) / 10},
  };
  if (person != nullptr && width > 0 && height > 0) {
    const auto w = static_cast<float>(width);
    const auto h = static_cast<float>(height);
    const Box& b = person->box;
    j["box"] = boxJson(Box{b.x / w, b.y / h, b.width / w, b.height / h}, person->score);
    j["first_seen"] = isoUtcOfUnixSeconds(person->firstSeen);
    j["stationary"] = person->stationary;
  }
  return j.dump();
}

std::string lineEventJson(std::string_view camera, const LineSpec& line, const LineCrossingEvent& e,
                          std::uint64_t count, std::chrono::system_clock::time_point time,
                          int width, int height) {
  nlohmann::json j = {
      {"schema", kSchema},
      {"type", "cross"},
      {"camera", camera},
      {"line", line.name},
      {"direction", crossingDirectionName(e.direction)},
      {"direction_name", line.directionName(e.direction)},
      {"count", count},
      {"track_id", e.trackId},
      {"time", isoUtc(time)},
  };
  if (width > 0 && height > 0) {
    const auto w = static_cast<float>(width);
    const auto h = static_cast<float>(height);
    const Box& b = e.box;
    j["box"] = boxJson(Box{b.x / w, b.y / h, b.width / w, b.height / h}, e.score);
  }
  return j.dump();
}

}  // namespace vigil
