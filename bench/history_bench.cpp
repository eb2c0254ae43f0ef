// What keeping an event in the history (daemon/history/) costs: the writer's CPU and the disk per
// event, and pruning old events. An event here is what the daemon records for one: its `new`,
// one update, its `end`, its first picture and one better picture (JPEGs of a COCO photograph
// re-encoded at the snapshot's quality, about what a 640x480 camera's snapshot weighs).
// Run: build/bench/vigil_history_bench
#include <benchmark/benchmark.h>

#include <filesystem>
#include <opencv2/imgcodecs.hpp>
#include <random>

#include "daemon/history/event_history.h"

namespace vigil {
namespace {

std::string snapshotJpeg() {
  const std::filesystem::path dir =
      std::filesystem::path(VIGIL_SHARED_DIR) / "data/coco-person-dev/images";
  cv::Mat picture;
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    picture = cv::imread(f.path().string());
    if (!picture.empty()) break;
  }
  if (picture.empty()) picture = cv::Mat(480, 640, CV_8UC3, cv::Scalar(80, 90, 100));
  std::vector<unsigned char> bytes;
  cv::imencode(".jpg", picture, bytes, {cv::IMWRITE_JPEG_QUALITY, 85});
  return std::string(bytes.begin(), bytes.end());
}

std::filesystem::path freshDir(const char* name) {
  auto dir = std::filesystem::temp_directory_path() / name;
  std::filesystem::remove_all(dir);
  return dir;
}

std::uintmax_t bytesUnder(const std::filesystem::path& dir) {
  std::uintmax_t n = 0;
  for (const auto& f : std::filesystem::recursive_directory_iterator(dir)) {
    if (f.is_regular_file()) n += f.file_size();
  }
  return n;
}

void recordOneEvent(EventHistory& history, const std::string& jpeg, std::int64_t i) {
  EventRecord e;
  e.id = "door-camera-" + std::to_string(1'765'000'000'000 + i) + "-1";
  e.camera = "door";
  e.start = std::chrono::system_clock::now();
  e.count = 1;
  e.maxCount = 1;
  e.maxScore = 0.8F;
  e.trackIds = {static_cast<std::uint64_t>(i)};
  e.backend = "cpu-ort";
  history.record(e);
  history.recordPicture(e.id, EventPictureKind::kFirst, jpeg);
  e.count = 2;
  e.maxCount = 2;
  history.record(e);
  history.recordPicture(e.id, EventPictureKind::kBest, jpeg);
  e.end = e.start + std::chrono::seconds(20);
  e.count = 0;
  history.record(e);
}

// Each event written and waited for (its commits synced): the process's CPU, the writer's
// included, per event, and the bytes on disk per event.
void BM_HistoryEvent(benchmark::State& state) {
  const std::string jpeg = snapshotJpeg();
  const auto dir = freshDir("vigil-history-bench");
  auto history = EventHistory::open({.dir = dir});
  if (!history) {
    state.SkipWithError(history.error().message.c_str());
    return;
  }
  std::int64_t i = 0;
  for (auto _ : state) {
    recordOneEvent(**history, jpeg, i++);
    (*history)->flush();
  }
  state.counters["disk_bytes_per_event"] =
      static_cast<double>(bytesUnder(dir)) / static_cast<double>(std::max<std::int64_t>(i, 1));
  state.counters["jpeg_bytes"] = static_cast<double>(jpeg.size());
  history->reset();
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_HistoryEvent)->MeasureProcessCPUTime()->UseRealTime()->Unit(benchmark::kMillisecond);

// Deleting range(0) old events and their pictures at once (the retention's prune).
void BM_HistoryPrune(benchmark::State& state) {
  const std::string jpeg = snapshotJpeg();
  const auto events = state.range(0);
  for (auto _ : state) {
    state.PauseTiming();
    const auto dir = freshDir("vigil-history-prune-bench");
    {
      auto history = EventHistory::open({.dir = dir});
      for (std::int64_t i = 0; i < events; ++i) {
        recordOneEvent(**history, jpeg, i);
        (*history)->flush();  // within the queue's bound: none dropped
      }
    }
    auto db = HistoryDatabase::open(dir / "events.db");
    PictureFiles pictures(dir / "pictures");
    state.ResumeTiming();
    auto pruned = db->prune(std::chrono::system_clock::now() + std::chrono::hours(1), 1LL << 40);
    for (const std::string& file : pruned->files) pictures.remove(file);
    state.PauseTiming();
    std::filesystem::remove_all(dir);
    if (pruned->events != events) {
      state.SkipWithError("not every event was pruned");
      break;
    }
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * events);
}
BENCHMARK(BM_HistoryPrune)->Arg(1000)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace vigil

BENCHMARK_MAIN();
