#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace vigil {

// systemd's service notification protocol (sd_notify(3), through libsystemd): readiness for
// Type=notify, STATUS= lines for `systemctl status`, reload and stop notices, and watchdog pings.
// Outside systemd (no $NOTIFY_SOCKET) every call does nothing.
// Threads: call from one thread (the daemon's io_context). Errors of the socket are logged once
// and otherwise ignored: a lost notification must never stop detection.
class SystemdNotifier {
 public:
  SystemdNotifier();

  bool active() const { return active_; }
  // WATCHDOG_USEC for this process, if systemd set a watchdog; ping at half of it.
  std::optional<std::chrono::microseconds> watchdogTimeout() const { return watchdog_; }

  void ready(std::string_view status);
  void status(std::string_view status);
  void reloading();  // then ready() when the reload is done
  void stopping();
  void watchdog();

 private:
  void send(const std::string& message);

  bool active_ = false;
  bool failureLogged_ = false;
  std::optional<std::chrono::microseconds> watchdog_;
};

}  // namespace vigil
