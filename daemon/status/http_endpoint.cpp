#include "daemon/status/http_endpoint.h"

#include "daemon/base/log.h"

namespace vigil {

namespace {

HttpServerSettings settingsOf(const HttpConfig& config) {
  HttpServerSettings settings;
  settings.listen = config.listen;
  return settings;
}

}  // namespace

HttpEndpoint::HttpEndpoint(boost::asio::io_context& io, const HttpConfig& config,
                           StatusApi::Sources sources)
    : config_(config),
      statusApi_(std::move(sources)),
      server_(io, settingsOf(config)),
      security_(io, server_),
      log_(logger("daemon")) {
  security_.apply(config_);
  statusApi_.addRoutes(server_);
}

Expected<void> HttpEndpoint::start() {
  if (auto ok = server_.start(); !ok) {
    log_->error("{}", ok.error().message);
    return ok;
  }
  // The bound port, not the configured one: port 0 (tests) picks a free one.
  const std::string host = config_.listen.substr(0, config_.listen.rfind(':'));
  const bool tls = config_.web && config_.web->tlsContext;
  log_->info("HTTP: status page, /metrics, /healthz, /readyz and /api/status on {}://{}:{}/",
             tls ? "https" : "http", host, server_.port());
  // Pictures refused for want of logins is worth a warning: the user may not expect it.
  log_->log(config_.refusesCameraViews() ? spdlog::level::warn : spdlog::level::info, "HTTP: {}",
            describeHttpAccess(config_));
  return {};
}

void HttpEndpoint::reload(const HttpConfig& config) {
  config_ = config;
  security_.apply(config_);
  log_->info("reload: {}", describeHttpAccess(config_));
}

void HttpEndpoint::stop() {
  security_.stop();
  server_.stop();
}

}  // namespace vigil
