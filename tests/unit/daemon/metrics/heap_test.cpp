#include "daemon/metrics/heap.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define VIGIL_SANITIZED_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define VIGIL_SANITIZED_ALLOCATOR 1
#endif
#endif

namespace vigil {
namespace {

[[maybe_unused]] std::size_t residentBytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t size = 0;
  std::size_t resident = 0;
  statm >> size >> resident;
  return resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

constexpr std::size_t kMiB = 1024 * 1024;

// 64 MiB in 64 KiB blocks (below glibc's mmap threshold, so from the arena), every block
// written; then all but every 16th freed. The kept blocks pin the freed ranges below the
// arena's top, where free() never gives memory back: the daemon's frames and tensors in small.
TEST(HeapTest, ReleaseGivesFreedPagesBelowLiveOnesBackToTheKernel) {
#ifdef VIGIL_SANITIZED_ALLOCATOR
  GTEST_SKIP() << "a sanitizer's allocator replaces glibc's: nothing to release";
#else
  constexpr std::size_t kBlock = 64 * 1024;
  constexpr std::size_t kBlocks = 1024;
  const HeapUsage before = heapUsage();
  std::vector<char*> blocks;
  for (std::size_t i = 0; i < kBlocks; ++i) {
    blocks.push_back(static_cast<char*>(std::malloc(kBlock)));
    ASSERT_NE(blocks.back(), nullptr);
    std::memset(blocks.back(), static_cast<int>(i), kBlock);
  }
  const HeapUsage allocated = heapUsage();
  EXPECT_GE(allocated.inUse, before.inUse + 60 * kMiB);

  for (std::size_t i = 0; i < kBlocks; ++i) {
    if (i % 16 != 15) {
      std::free(blocks[i]);
      blocks[i] = nullptr;
    }
  }
  const HeapUsage freed = heapUsage();
  const std::size_t residentFreed = residentBytes();
  EXPECT_LE(freed.inUse + 56 * kMiB, allocated.inUse) << "in use falls as blocks are freed";
  EXPECT_GE(freed.freeKept, 56 * kMiB) << "and the allocator keeps what they held";

  releaseFreeHeap();
  const std::size_t residentReleased = residentBytes();
  EXPECT_GE(residentFreed, residentReleased + 48 * kMiB)
      << "resident " << residentFreed / kMiB << " MiB before the release, "
      << residentReleased / kMiB << " MiB after";
  for (char* block : blocks) {
    if (block != nullptr) {
      EXPECT_EQ(block[0], block[kBlock - 1]) << "live blocks keep their bytes";
    }
    std::free(block);
  }
#endif
}

}  // namespace
}  // namespace vigil
