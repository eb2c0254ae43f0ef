#include "daemon/events/track_recorder.h"

#include "daemon/base/log.h"
#include "detector/track/mot_io.h"

namespace vigil {

TrackRecorder::TrackRecorder(std::filesystem::path dir) : dir_(std::move(dir)) {}

void TrackRecorder::record(const std::string& camera, std::uint64_t sequence,
                           const std::vector<TrackedPerson>& persons) {
  auto [it, opened] = files_.try_emplace(camera);
  std::ofstream& file = it->second;
  if (opened) {
    const std::filesystem::path path = dir_ / (camera + ".txt");
    file.open(path, std::ios::trunc);
    if (!file) logger("daemon")->error("--tracks-out: cannot write {}", path.string());
  }
  if (!file) return;
  const auto previous = previousFrame_.find(camera);
  for (const TrackedPerson& p : persons) {
    if (p.start && previous != previousFrame_.end()) {
      writeMotLine(file, previous->second, p.id, *p.start, p.score);
    }
    if (p.detected) writeMotLine(file, sequence + 1, p.id, p.box, p.score);
  }
  previousFrame_[camera] = sequence + 1;
  file.flush();
}

}  // namespace vigil
