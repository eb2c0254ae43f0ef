#include "daemon/service/watchdog_pinger.h"

#include "daemon/base/log.h"

namespace vigil {

WatchdogPinger::WatchdogPinger(boost::asio::io_context& io, SystemdNotifier& notifier,
                               std::function<HttpResponse()> health)
    : timer_(io), notifier_(notifier), health_(std::move(health)) {}

void WatchdogPinger::start() {
  auto timeout = notifier_.watchdogTimeout();
  if (!timeout) return;
  logger("daemon")->info("systemd watchdog: {} s; pinged while every thread is healthy",
                         std::chrono::duration<double>(*timeout).count());
  ping(*timeout / 2);
}

void WatchdogPinger::ping(std::chrono::microseconds interval) {
  timer_.expires_after(interval);
  timer_.async_wait([this, interval](boost::system::error_code ec) {
    if (ec) return;
    HttpResponse health = health_();
    if (health.status == 200) {
      notifier_.watchdog();
      warned_ = false;
    } else if (!warned_) {
      logger("daemon")->error("withholding the systemd watchdog ping: {}", health.body);
      notifier_.status("unhealthy: " + health.body);
      warned_ = true;
    }
    ping(interval);
  });
}

}  // namespace vigil
