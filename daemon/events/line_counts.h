#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/events/person_tracks.h"

namespace vigil {

// The running count of every counting line, per direction, and where a restart continues from:
// a small JSON file in the service's state directory (`vigil run --state-dir`, by default
// $STATE_DIRECTORY, which systemd's StateDirectory=vigil sets to /var/lib/vigil), written
// atomically (a temporary file, fsync, rename) after the counts changed. A line keeps its count
// across restarts and reloads while its points stay the same; a line whose points change starts
// again at 0, and a line no longer configured is forgotten.
//
// File (schema 1): {"schema": 1, "cameras": {"<camera>": {"<line>": {"points": [[x, y], ...],
// "in": N, "out": N}}}}.
//
// Threads: the control thread only (the event publisher).
class LineCounts {
 public:
  struct Line {
    std::string camera;
    std::string name;
    std::vector<LinePoint> points;
  };

  // `file` empty: counts are not kept across restarts. A file that cannot be read or parsed is
  // logged once and counting starts at 0 (the file is rewritten at the first crossing).
  explicit LineCounts(std::filesystem::path file = {});

  // The lines configured now (start, reload): those whose points differ from what is kept start
  // at 0, the others keep their counts, the rest are forgotten. Returns the lines that (re)started
  // at 0 although a count was kept for them under other points.
  std::vector<std::string> configure(const std::vector<Line>& lines);

  // One crossing: the direction's new running count (0 for a line not configured).
  std::uint64_t add(std::string_view camera, std::string_view line, CrossingDirection direction);
  std::optional<std::uint64_t> count(std::string_view camera, std::string_view line,
                                     CrossingDirection direction) const;

  // Writes the file when the counts changed since the last save (a tick, the stop). A failed
  // write is logged (once until one succeeds) and retried at the next save.
  void save();
  const std::filesystem::path& file() const { return file_; }

 private:
  struct Entry {
    std::vector<LinePoint> points;
    std::array<std::uint64_t, 2> counts{0, 0};  // in, out

    bool operator==(const Entry&) const = default;
  };
  using Lines = std::map<std::string, Entry, std::less<>>;

  void load();

  std::filesystem::path file_;
  std::map<std::string, Lines, std::less<>> cameras_;
  bool dirty_ = false;
  bool saveFailed_ = false;
};

}  // namespace vigil
