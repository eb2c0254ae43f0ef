#include "daemon/metrics/heap.h"

#include <malloc.h>

#include <optional>

#include "daemon/base/metrics.h"

namespace vigil {

HeapUsage heapUsage() {
  struct mallinfo2 info = mallinfo2();
  return HeapUsage{info.uordblks + info.hblkhd, info.fordblks};
}

void releaseFreeHeap() { malloc_trim(0); }

void registerHeapMetrics(Registry& registry) {
  registry
      .callbackGauge("vigil_heap_in_use_bytes",
                     "Bytes the C allocator has handed out and not got back (live heap)")
      .add({}, []() -> std::optional<double> { return static_cast<double>(heapUsage().inUse); });
  registry
      .callbackGauge("vigil_heap_free_bytes",
                     "Bytes freed and kept in the C allocator's free lists (their whole "
                     "pages go back to the kernel once a minute)")
      .add({}, []() -> std::optional<double> { return static_cast<double>(heapUsage().freeKept); });
}

}  // namespace vigil
