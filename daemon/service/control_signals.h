#pragma once

// clang-format off
// Boost 1.74's asio uses std::exchange without including <utility> (fails with g++ 12, C++20).
#include <utility>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
// clang-format on

#include <functional>

namespace vigil {

// What asks the daemon to reload or stop, on the control thread's io_context: SIGHUP reloads
// (and is listened for again), SIGINT and SIGTERM stop, and so does the end of `vigil run
// --duration`. Once a stop signal came, a second SIGTERM or Ctrl-C ends the process at once:
// their default action again (systemd counts an end by SIGTERM as clean).
// Threads: the thread that runs `io`; `reload` and `stop` are called there.
class ControlSignals {
 public:
  // Takes the signals at once: until then SIGHUP's and SIGTERM's default action kills the
  // process, and systemd may reload or stop as soon as READY=1 (or even before) is sent.
  ControlSignals(boost::asio::io_context& io, std::function<void()> reload,
                 std::function<void()> stop);

  // Listens, again after each SIGHUP, until a stop signal or cancel().
  void listen();
  // Stops after `seconds` as well (--duration).
  void stopAfter(double seconds);
  // The daemon stops: no signal is waited for any more.
  void cancel() { signals_.cancel(); }

 private:
  boost::asio::signal_set signals_;
  boost::asio::steady_timer duration_;
  std::function<void()> reload_;
  std::function<void()> stop_;
};

}  // namespace vigil
