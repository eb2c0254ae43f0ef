#include "daemon/service/control_signals.h"

#include <csignal>

#include "daemon/base/log.h"

namespace vigil {

ControlSignals::ControlSignals(boost::asio::io_context& io, std::function<void()> reload,
                               std::function<void()> stop)
    : signals_(io), duration_(io), reload_(std::move(reload)), stop_(std::move(stop)) {
  signals_.add(SIGINT);
  signals_.add(SIGTERM);
  signals_.add(SIGHUP);
}

void ControlSignals::listen() {
  signals_.async_wait([this](boost::system::error_code ec, int signal) {
    if (ec) return;
    if (signal == SIGHUP) {
      reload_();
      listen();
      return;
    }
    boost::system::error_code ignored;
    signals_.remove(SIGINT, ignored);
    signals_.remove(SIGTERM, ignored);
    logger("daemon")->info("signal {} received, stopping (another ends the process at once)",
                           signal);
    stop_();
  });
}

void ControlSignals::stopAfter(double seconds) {
  duration_.expires_after(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(seconds)));
  duration_.async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    logger("daemon")->info("--duration reached, stopping");
    stop_();
  });
}

}  // namespace vigil
