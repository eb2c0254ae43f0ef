#pragma once

#include <atomic>

// Work on threads of their own that cannot be cut (a model's session creation, the NPU's
// bring-up: one call each, seconds to minutes on a real device, forever on a hung one) and that
// a stop must not wait for. While the process runs, their owners wait for them as usual (a
// reload must release an NPU session before opening the next). Once the process is ending
// (processEnding()), an owner leaves such work running on a detached thread, counted here; the
// process then ends with std::_Exit if any is still running (runDaemon), since normal exit would
// run static destructors under it.
namespace vigil::background {

namespace detail {
inline std::atomic<bool> ending{false};
inline std::atomic<int> detached{0};
}  // namespace detail

// The daemon's stop has begun: from now on owners do not wait for work that cannot be cut.
inline void processEnding() { detail::ending = true; }
inline bool isProcessEnding() { return detail::ending.load(); }

// A detached thread's work begins and ends (its thread calls both).
inline void detachedStarted() { ++detail::detached; }
inline void detachedEnded() { --detail::detached; }
// Detached work still running now.
inline int detachedRunning() { return detail::detached.load(); }

}  // namespace vigil::background
