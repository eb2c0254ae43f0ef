#pragma once

#include <time.h>

#include <cstdint>

namespace vigil {

// The calling thread's own CPU time so far (CLOCK_THREAD_CPUTIME_ID), in nanoseconds: what a
// capture thread, or one decode on whatever thread, cost.
inline std::int64_t threadCpuNanos() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

}  // namespace vigil
