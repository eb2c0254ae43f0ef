#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

#include "daemon/base/error.h"
#include "daemon/events/event_recorder.h"

namespace vigil {

// The history's pictures: JPEG files under `dir`, one folder per day (UTC) they were written,
// named after the event and the picture's kind ("2026-12-07/door-camera-1765101601123-4-best.jpg").
// A file is written beside its name and renamed over it, so a reader or a power cut never sees
// half a picture. A full disk is ErrorCode::kUnavailable.
// Threads: the history's writer writes and removes; readers only open what a row names.
class PictureFiles {
 public:
  explicit PictureFiles(std::filesystem::path dir) : dir_(std::move(dir)) {}

  struct Written {
    std::string file;  // relative to dir()
    std::int64_t bytes = 0;
  };
  Expected<Written> write(const std::string& eventId, EventPictureKind kind,
                          const std::string& jpeg, std::chrono::system_clock::time_point now);
  // Removes a file a pruned or replaced picture left (a missing one is no error), and its day's
  // folder once empty.
  void remove(const std::string& file);
  // Where `file` (as a row names it) is; empty for a name that leaves dir().
  std::filesystem::path path(const std::string& file) const;
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

}  // namespace vigil
