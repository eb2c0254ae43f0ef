#include "daemon/events/line_counts.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "daemon/base/log.h"

namespace vigil {

namespace {

std::size_t directionIndex(CrossingDirection d) { return d == CrossingDirection::kIn ? 0 : 1; }

// Writes `text` to `file` so that a crash leaves either the old file or the new one: a
// temporary file beside it, flushed to the disk, renamed over it. Returns the error, if any.
std::optional<std::string> writeAtomically(const std::filesystem::path& file,
                                           const std::string& text) {
  const std::filesystem::path partial = file.string() + ".partial";
  const int fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fmt::format("cannot create {}: {}", partial.string(), std::strerror(errno));
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  const bool written = done == text.size() && ::fsync(fd) == 0;
  const int saved = errno;
  ::close(fd);
  if (!written) return fmt::format("cannot write {}: {}", partial.string(), std::strerror(saved));
  std::error_code ec;
  std::filesystem::rename(partial, file, ec);
  if (ec)
    return fmt::format("cannot rename {} to {}: {}", partial.string(), file.string(), ec.message());
  return std::nullopt;
}

}  // namespace

LineCounts::LineCounts(std::filesystem::path file) : file_(std::move(file)) { load(); }

void LineCounts::load() {
  if (file_.empty()) return;
  std::ifstream in(file_);
  if (!in) return;  // the first start: no counts yet
  std::stringstream text;
  text << in.rdbuf();
  try {
    const nlohmann::json j = nlohmann::json::parse(text.str());
    for (const auto& [camera, lines] : j.at("cameras").items()) {
      for (const auto& [name, line] : lines.items()) {
        Entry& e = cameras_[camera][name];
        for (const auto& p : line.at("points")) {
          e.points.push_back({p.at(0).get<double>(), p.at(1).get<double>()});
        }
        e.counts = {line.at("in").get<std::uint64_t>(), line.at("out").get<std::uint64_t>()};
      }
    }
  } catch (const nlohmann::json::exception& e) {
    cameras_.clear();
    logger("events")->warn("{}: not a line count file ({}); the line counts start at 0",
                           file_.string(), e.what());
  }
}

std::vector<std::string> LineCounts::configure(const std::vector<Line>& lines) {
  std::map<std::string, Lines, std::less<>> next;
  std::vector<std::string> restarted;
  for (const Line& l : lines) {
    Entry& e = next[l.camera][l.name];
    e.points = l.points;
    auto camera = cameras_.find(l.camera);
    if (camera == cameras_.end()) continue;
    auto kept = camera->second.find(l.name);
    if (kept == camera->second.end()) continue;
    if (kept->second.points == l.points) {
      e.counts = kept->second.counts;
    } else if (kept->second.counts != std::array<std::uint64_t, 2>{0, 0}) {
      restarted.push_back(l.camera + "/" + l.name);
    }
  }
  if (next != cameras_) dirty_ = true;
  cameras_ = std::move(next);
  return restarted;
}

std::uint64_t LineCounts::add(std::string_view camera, std::string_view line,
                              CrossingDirection direction) {
  auto c = cameras_.find(camera);
  if (c == cameras_.end()) return 0;
  auto l = c->second.find(line);
  if (l == c->second.end()) return 0;
  dirty_ = true;
  return ++l->second.counts[directionIndex(direction)];
}

std::optional<std::uint64_t> LineCounts::count(std::string_view camera, std::string_view line,
                                               CrossingDirection direction) const {
  auto c = cameras_.find(camera);
  if (c == cameras_.end()) return std::nullopt;
  auto l = c->second.find(line);
  if (l == c->second.end()) return std::nullopt;
  return l->second.counts[directionIndex(direction)];
}

void LineCounts::save() {
  if (!dirty_ || file_.empty()) return;
  nlohmann::json cameras = nlohmann::json::object();
  for (const auto& [camera, lines] : cameras_) {
    for (const auto& [name, e] : lines) {
      nlohmann::json points = nlohmann::json::array();
      for (const LinePoint& p : e.points) points.push_back({p.x, p.y});
      cameras[camera][name] = {{"points", points}, {"in", e.counts[0]}, {"out", e.counts[1]}};
    }
  }
  const std::string text = nlohmann::json{{"schema", 1}, {"cameras", cameras}}.dump(1) + "\n";
  if (auto error = writeAtomically(file_, text)) {
    if (!saveFailed_) {
      logger("events")->error("line counts: {}; a restart would start them again at 0", *error);
    }
    saveFailed_ = true;
    return;
  }
  if (saveFailed_) logger("events")->info("line counts: {} written again", file_.string());
  saveFailed_ = false;
  dirty_ = false;
}

}  // namespace vigil
