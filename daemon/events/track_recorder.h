#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "daemon/events/person_tracks.h"

namespace vigil {

// `vigil run --tracks-out DIR`: every tracked frame's detected persons, one MOTChallenge file per
// camera (DIR/<camera>.txt, frames numbered from the source's frame index + 1, the format of
// `vigil track`), to score the daemon's own tracking with `vigil eval-tracks`. A person's start
// (TrackedPerson::start) is written as a line of the camera's previous tracked frame, as `vigil
// track` writes it. A file that cannot be written is logged once and skipped.
//
// Threads: the control thread only (the result path).
class TrackRecorder {
 public:
  explicit TrackRecorder(std::filesystem::path dir);

  void record(const std::string& camera, std::uint64_t sequence,
              const std::vector<TrackedPerson>& persons);

 private:
  std::filesystem::path dir_;
  std::map<std::string, std::ofstream> files_;
  std::map<std::string, std::uint64_t> previousFrame_;  // by camera: the last frame recorded
};

}  // namespace vigil
