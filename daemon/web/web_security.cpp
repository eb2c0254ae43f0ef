#include "daemon/web/web_security.h"

// clang-format off
// Boost 1.74's asio uses std::exchange without including <utility> (fails with g++ 12, C++20).
#include <utility>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
// clang-format on
#include <fmt/format.h>
#include <sys/stat.h>

#include "daemon/base/log.h"
#include "daemon/config/web_config.h"
#include "daemon/web/http_logins.h"

namespace vigil {

HttpSecurity httpSecurityOf(const HttpConfig& config) {
  HttpSecurity security;
  security.monitoringNeedsLogin = config.metricsNeedLogin;
  if (!config.web) return security;
  security.tls = config.web->tlsContext;
  if (!config.web->basicAuthUsers.empty()) {
    security.logins = std::make_shared<HttpLogins>(config.web->basicAuthUsers);
  }
  security.headers = config.web->headers;
  return security;
}

std::string describeHttpAccess(const HttpConfig& config) {
  if (!config.enabled) return "http: off";
  const bool tls = config.web && config.web->tlsContext;
  const std::size_t users = config.web ? config.web->basicAuthUsers.size() : 0;
  const std::string where = fmt::format("{} on {}", tls ? "https" : "http", config.listen);
  if (users == 0) {
    if (config.listensOnLoopback()) {
      return where + " without logins: loopback, so every page answers this machine's users";
    }
    return where +
           " without logins and not on loopback: camera pictures, events and the page answer 403 "
           "(give http.web_config basic_auth_users to serve them); /metrics, /healthz and "
           "/readyz answer without a login";
  }
  return fmt::format(
      "{} with logins for {} user(s): camera pictures, events and the page need a login; "
      "/metrics, /healthz and /readyz {}{}",
      where, users, config.metricsNeedLogin ? "need one too" : "answer without one",
      tls ? "" : " (without TLS the password crosses the network readable: add tls_server_config)");
}

struct WebSecurityWatch::Impl : std::enable_shared_from_this<WebSecurityWatch::Impl> {
  Impl(boost::asio::io_context& io, HttpServer& s) : server(s), timer(io) {}

  // What tells a changed file: a renewal writes a new file (new inode) or rewrites it in place.
  struct FileStamp {
    std::filesystem::path path;
    bool exists = false;
    std::int64_t mtimeNs = 0;
    std::int64_t size = 0;
    std::uint64_t inode = 0;
    bool operator==(const FileStamp&) const = default;
  };

  static FileStamp stampOf(const std::filesystem::path& path) {
    FileStamp stamp{path};
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0) return stamp;
    stamp.exists = true;
    stamp.mtimeNs =
        static_cast<std::int64_t>(info.st_mtim.tv_sec) * 1000000000 + info.st_mtim.tv_nsec;
    stamp.size = static_cast<std::int64_t>(info.st_size);
    stamp.inode = static_cast<std::uint64_t>(info.st_ino);
    return stamp;
  }

  static std::vector<FileStamp> stampsOf(const WebConfig& web) {
    std::vector<FileStamp> stamps;
    for (const auto& path : web.sources()) stamps.push_back(stampOf(path));
    return stamps;
  }

  void schedule() {
    timer.expires_after(kInterval);
    timer.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
      auto self = weak.lock();
      if (ec || !self || self->stopped) return;
      self->look();
      self->schedule();
    });
  }

  void look() {
    if (!config.web) return;
    std::vector<FileStamp> now = stampsOf(*config.web);
    if (now == stamps || now == failedStamps) return;
    auto web = loadWebConfig(config.webConfigFile);
    if (!web) {
      failedStamps = now;
      log->error("{} changed but does not load; the running TLS and logins stay: {}",
                 config.webConfigFile, web.error().message);
      return;
    }
    for (const std::string& warning : web->warnings) log->warn("{}", warning);
    config.web = std::make_shared<const WebConfig>(std::move(*web));
    stamps = stampsOf(*config.web);
    failedStamps.clear();
    server.setSecurity(httpSecurityOf(config));
    log->info("{} or a file it names changed: read again; {}", config.webConfigFile,
              describeHttpAccess(config));
  }

  HttpServer& server;
  boost::asio::steady_timer timer;
  HttpConfig config;
  std::vector<FileStamp> stamps;
  std::vector<FileStamp> failedStamps;
  bool stopped = false;
  std::shared_ptr<spdlog::logger> log = logger("http");
};

WebSecurityWatch::WebSecurityWatch(boost::asio::io_context& io, HttpServer& server)
    : impl_(std::make_shared<Impl>(io, server)) {}

WebSecurityWatch::~WebSecurityWatch() { stop(); }

void WebSecurityWatch::apply(const HttpConfig& config) {
  Impl& impl = *impl_;
  impl.config = config;
  impl.stamps = config.web ? Impl::stampsOf(*config.web) : std::vector<Impl::FileStamp>{};
  impl.failedStamps.clear();
  impl.server.setSecurity(httpSecurityOf(config));
  if (config.web && !impl.stopped) {
    impl.timer.cancel();
    impl.schedule();
  }
}

void WebSecurityWatch::stop() {
  impl_->stopped = true;
  impl_->timer.cancel();
}

}  // namespace vigil
