#pragma once

#include <spdlog/logger.h>

#include <memory>

#include "daemon/settings/settings.h"
#include "daemon/status/status_api.h"
#include "daemon/web/http_server.h"
#include "daemon/web/web_security.h"

namespace vigil {

// The daemon's HTTP side: the server on http.listen with the status API's routes, and its TLS and
// logins kept as the web configuration says (WebSecurityWatch). Control thread only.
class HttpEndpoint {
 public:
  HttpEndpoint(boost::asio::io_context& io, const HttpConfig& config, StatusApi::Sources sources);

  // Binds and logs where and for whom it serves; errors are logged and returned.
  Expected<void> start();
  // A reload's http section on the same listener: TLS, logins and headers apply at once.
  void reload(const HttpConfig& config);
  void stop();

  const HttpServerCounters& counters() const { return server_.counters(); }

 private:
  HttpConfig config_;
  StatusApi statusApi_;
  HttpServer server_;  // after statusApi_: its routes call it
  WebSecurityWatch security_;
  std::shared_ptr<spdlog::logger> log_;
};

}  // namespace vigil
