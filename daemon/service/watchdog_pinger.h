#pragma once

// clang-format off
// Boost 1.74's asio uses std::exchange without including <utility> (fails with g++ 12, C++20).
#include <utility>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
// clang-format on

#include <chrono>
#include <functional>

#include "daemon/service/systemd_notify.h"
#include "daemon/web/http_server.h"

namespace vigil {

// Pings systemd's watchdog at half its timeout only while `health` answers 200 (every thread
// keeps its heartbeat): a stuck capture thread or inference makes systemd restart the service
// after WatchdogSec. Withholding is logged once, and said in the unit's status line.
//
// Threads: the io_context's thread. Borrows the io_context and the notifier, which outlive it.
class WatchdogPinger {
 public:
  WatchdogPinger(boost::asio::io_context& io, SystemdNotifier& notifier,
                 std::function<HttpResponse()> health);

  // Does nothing outside systemd or without WatchdogSec.
  void start();

 private:
  void ping(std::chrono::microseconds interval);

  boost::asio::steady_timer timer_;
  SystemdNotifier& notifier_;
  std::function<HttpResponse()> health_;
  bool warned_ = false;
};

}  // namespace vigil
