#pragma once

#include <cstddef>

// What glibc's allocator holds, and giving back what it keeps.
//
// glibc keeps memory that threads free in their arenas instead of returning it to the kernel;
// it gives back only the free top of an arena. Vigil's capture and inference threads allocate
// and free megabyte-sized frames and tensors many times a second (OpenCV and FFmpeg inside), so
// freed chunks sit below live ones and the resident size crept up for an hour while the live
// heap stayed flat (docs/reliability.md, Soak: +5.2% in the hour; under heaptrack the live heap
// moved 0.1 MiB in 20 minutes). The daemon hands the free pages back once a minute.
namespace vigil {

class Registry;

struct HeapUsage {
  std::size_t inUse = 0;     // handed out by malloc and not yet freed (arenas and mmap)
  std::size_t freeKept = 0;  // freed, in the arenas' free lists (resident until released)
};

// mallinfo2(): every arena, summed. Near zero under a sanitizer, whose allocator is not glibc's.
HeapUsage heapUsage();

// malloc_trim(0): returns the whole free pages of every arena to the kernel (madvise), not only
// each arena's top. Holds each arena's lock in turn while it works; the daemon's arenas keep
// about 15-18 MiB free between releases (vigil_heap_free_bytes in the soak), which takes 4.4 ms
// to give back (build/bench/vigil_heap_bench: median of 5, 2-vCPU VM beside a CI run; 120 MiB:
// 42 ms; nothing to give: 0.13 us).
void releaseFreeHeap();

// vigil_heap_in_use_bytes and vigil_heap_free_bytes, read at render time: RSS growing while
// in-use stays flat is the allocator keeping memory, not a leak.
void registerHeapMetrics(Registry& registry);

}  // namespace vigil
