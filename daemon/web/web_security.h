#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "daemon/settings/settings.h"
#include "daemon/web/http_server.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace vigil {

// What the `http` section gives the server: TLS, logins, headers (see RouteAccess).
HttpSecurity httpSecurityOf(const HttpConfig& config);

// One line on who may see what, for the start-up log, check-config and doctor, e.g.
// "https on 0.0.0.0:9842 with logins for 2 user(s): camera pictures, events and the page need a
// login; /metrics, /healthz and /readyz answer without one".
std::string describeHttpAccess(const HttpConfig& config);

// Keeps the server's security as the web configuration says: apply() at start and on SIGHUP, and
// every few seconds a look at the file and the certificate, key and CA files it names: when one
// has changed (a renewed certificate, a new password) the file is read again and applied, or, when
// it no longer reads, the error is logged once and the running security stays.
// Threads: the io_context's (the daemon's control thread), like the server.
class WebSecurityWatch {
 public:
  static constexpr std::chrono::seconds kInterval{5};

  WebSecurityWatch(boost::asio::io_context& io, HttpServer& server);
  ~WebSecurityWatch();
  WebSecurityWatch(const WebSecurityWatch&) = delete;
  WebSecurityWatch& operator=(const WebSecurityWatch&) = delete;

  void apply(const HttpConfig& config);
  void stop();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace vigil
