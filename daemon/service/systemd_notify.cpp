#include "daemon/service/systemd_notify.h"

#include <systemd/sd-daemon.h>

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

#include "daemon/base/log.h"

namespace vigil {

namespace {

// STATUS= is one line: a newline would start another assignment.
std::string oneLine(std::string_view text) {
  std::string line(text);
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return line;
}

}  // namespace

SystemdNotifier::SystemdNotifier() {
  const char* socket = std::getenv("NOTIFY_SOCKET");
  active_ = socket != nullptr && *socket != 0;
  std::uint64_t usec = 0;
  // 0: keep the variables, so a re-exec'd or child process sees them as systemd set them.
  if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
    watchdog_ = std::chrono::microseconds(usec);
  }
}

void SystemdNotifier::send(const std::string& message) {
  if (!active_) return;
  int r = sd_notify(0, message.c_str());
  if (r < 0 && !failureLogged_) {
    logger("daemon")->warn("systemd notification failed: {}", std::strerror(-r));
    failureLogged_ = true;
  }
}

void SystemdNotifier::ready(std::string_view status) { send("READY=1\nSTATUS=" + oneLine(status)); }

void SystemdNotifier::status(std::string_view status) { send("STATUS=" + oneLine(status)); }

void SystemdNotifier::reloading() {
  // MONOTONIC_USEC lets systemd 253+ (Type=notify-reload) match the reload; older ones ignore it.
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  auto usec = static_cast<long long>(now.tv_sec) * 1000000 + now.tv_nsec / 1000;
  send("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec));
}

void SystemdNotifier::stopping() { send("STOPPING=1"); }

void SystemdNotifier::watchdog() { send("WATCHDOG=1"); }

}  // namespace vigil
