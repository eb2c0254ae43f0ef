// What tracking costs per frame: ByteTracker::update with N persons walking (N = 1, 5, 20, 40),
// each detection jittered, a tenth of them at a low score, at 5 frames per second, and the IoU
// baseline beside it. Run: build/bench/vigil_tracker_bench
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "detector/track/byte_tracker.h"

namespace vigil {
namespace {

// Frames of `persons` walkers on a grid, each moving its own way, 5 frames per second.
std::vector<std::vector<Detection>> walkers(int persons, int frames) {
  std::mt19937 random(7);
  std::normal_distribution<float> jitter(0, 2);
  std::vector<std::vector<Detection>> out(static_cast<std::size_t>(frames));
  for (int f = 0; f < frames; ++f) {
    for (int p = 0; p < persons; ++p) {
      const float x = 60.0F * static_cast<float>(p % 10) + static_cast<float>((p % 3) - 1) * 4 * f;
      const float y = 150.0F * static_cast<float>(p / 10) + static_cast<float>((p % 2) * 2) * f;
      const float score = p % 10 == 9 ? 0.3F : 0.85F;
      out[static_cast<std::size_t>(f)].push_back(
          Detection{Box{x + jitter(random), y + jitter(random), 40, 100}, score, 0});
    }
  }
  return out;
}

template <typename Tracker>
void runTracker(benchmark::State& state, Tracker tracker) {
  constexpr int kFrames = 500;
  const auto frames = walkers(static_cast<int>(state.range(0)), kFrames);
  int f = 0;
  double time = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(tracker.update(time, frames[static_cast<std::size_t>(f)]));
    time += 0.2;
    if (++f == kFrames) f = 0;
  }
  state.counters["persons"] = static_cast<double>(state.range(0));
}

void BM_ByteTrackerUpdate(benchmark::State& state) { runTracker(state, ByteTracker()); }
void BM_IouTrackerUpdate(benchmark::State& state) { runTracker(state, IouTracker()); }

BENCHMARK(BM_ByteTrackerUpdate)->Arg(1)->Arg(5)->Arg(20)->Arg(40)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_IouTrackerUpdate)->Arg(1)->Arg(5)->Arg(20)->Arg(40)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace vigil

BENCHMARK_MAIN();
