// What the daemon's once-a-minute heap release (daemon/metrics/heap.h) costs, on a heap shaped
// like the daemon's: 64 KiB blocks with 15 of every 16 freed below live ones, so the freed pages
// cannot leave through the arena's top. Run: build/bench/vigil_heap_bench
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "daemon/metrics/heap.h"

namespace vigil {
namespace {

constexpr std::size_t kBlock = 64 * 1024;

// range(0): MiB of heap written, of which 15/16 freed before each release.
void BM_ReleaseFreeHeap(benchmark::State& state) {
  const std::size_t blocks = static_cast<std::size_t>(state.range(0)) * 1024 * 1024 / kBlock;
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<char*> kept;
    std::vector<char*> all;
    for (std::size_t i = 0; i < blocks; ++i) {
      all.push_back(static_cast<char*>(std::malloc(kBlock)));
      std::memset(all.back(), static_cast<int>(i), kBlock);
    }
    for (std::size_t i = 0; i < blocks; ++i) {
      if (i % 16 == 15) {
        kept.push_back(all[i]);
      } else {
        std::free(all[i]);
      }
    }
    state.ResumeTiming();
    releaseFreeHeap();
    state.PauseTiming();
    for (char* block : kept) std::free(block);
    state.ResumeTiming();
  }
  state.counters["freed_MiB"] = static_cast<double>(state.range(0)) * 15 / 16;
}
BENCHMARK(BM_ReleaseFreeHeap)->Arg(16)->Arg(128)->Unit(benchmark::kMillisecond);

// Nothing freed since the last release: the cost of the timer when the heap is quiet.
void BM_ReleaseFreeHeapWithNothingToGive(benchmark::State& state) {
  releaseFreeHeap();
  for (auto _ : state) releaseFreeHeap();
}
BENCHMARK(BM_ReleaseFreeHeapWithNothingToGive)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace vigil

BENCHMARK_MAIN();
