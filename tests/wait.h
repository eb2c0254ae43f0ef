#pragma once

#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>

// How the tests wait for something asynchronous: a condition polled until it holds or a
// deadline passes, never one read and never a fixed sleep. The deadlines are generous because
// they cost nothing when the condition comes true early, and a loaded machine (ctest -j2, a CI
// neighbour, scripts/test-under-load.sh) can be ten times slower than a quiet one.
// The kinds of wait and where each lives:
//   a condition in this process ........ waitUntil (here)
//   something that must not happen ..... holdsFor (here)
//   a log line, a process exit ......... ChildProcess::waitForLog, ::wait, ::stop (process.h)
//   a retained or a live MQTT message .. waitForRetained, retainedBecomes, Subscriber::waitFor
//                                        (mqtt_subscriber.h)
//   an HTTP answer ..................... waitForHttp (http_get.h)
//   the daemon's status API ............ VigilDaemon::waitForStatus, ::waitDetected
//                                        (vigil_daemon.h)
//   a systemd notification ............. NotifySocket::waitFor (notify_socket.h)
namespace vigil::testing {

using namespace std::chrono_literals;

// The deadline for anything a test expects to happen.
inline constexpr std::chrono::milliseconds kDeadline = 60s;

// Polls `condition` until it holds (true) or `limit` passes (false). The condition is asked
// once more at the deadline, so a slow last poll is not a failure.
inline bool waitUntil(const std::function<bool()>& condition,
                      std::chrono::milliseconds limit = kDeadline,
                      std::chrono::milliseconds every = 20ms) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(every);
  }
  return condition();
}

// For what must NOT happen (no retry, no last will, no second event): true when `condition`
// holds at every poll over the whole `window`, false as soon as it does not. The window is
// how long the test gives the wrong thing the chance to happen, so it is a choice of the test,
// not a wait for something to come true.
inline bool holdsFor(const std::function<bool()>& condition, std::chrono::milliseconds window,
                     std::chrono::milliseconds every = 20ms) {
  const auto end = std::chrono::steady_clock::now() + window;
  while (std::chrono::steady_clock::now() < end) {
    if (!condition()) return false;
    std::this_thread::sleep_for(every);
  }
  return condition();
}

// Time bounds in tests are product promises ("SIGTERM stops within 2 s"), made for the
// release build. Under a sanitizer, which slows everything 2-15x, the promise does not apply:
// the test still runs the path and prints the time, but does not judge it.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kTimingPromisesApply = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kTimingPromisesApply = false;
#else
inline constexpr bool kTimingPromisesApply = true;
#endif
#else
inline constexpr bool kTimingPromisesApply = true;
#endif

}  // namespace vigil::testing

// EXPECT_WITHIN(took, bound): `took` < `bound` in a build where timing promises apply (see
// kTimingPromisesApply); under a sanitizer the time is only printed.
#define EXPECT_WITHIN(took, bound)                                                                \
  do {                                                                                            \
    const auto vigilTook_ = (took);                                                               \
    const auto vigilSeconds_ = std::chrono::duration<double>(vigilTook_).count();                 \
    if constexpr (::vigil::testing::kTimingPromisesApply) {                                       \
      EXPECT_LT(vigilTook_, (bound)) << #took << " = " << vigilSeconds_ << " s";                  \
    } else {                                                                                      \
      std::printf("timing promise not judged under a sanitizer: %s = %.3f s (bound %s)\n", #took, \
                  vigilSeconds_, #bound);                                                         \
    }                                                                                             \
  } while (false)
