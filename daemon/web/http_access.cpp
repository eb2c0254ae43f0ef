// Who may see what on HttpServer: logins, their throttle, and camera views kept off the network
// when no logins are configured (http_server.h: RouteAccess, HttpSecurity).
#include <fmt/format.h>

#include "daemon/web/http_server_impl.h"

namespace vigil {

using namespace http_internal;

namespace {

HttpAdmission answer(HttpResponse response) {
  HttpAdmission a;
  a.kind = HttpAdmission::Kind::kAnswer;
  a.answer = std::move(response);
  return a;
}

// A user name as a client sent it, safe for a log line.
std::string printable(const std::string& text) {
  std::string out;
  for (char c : text.substr(0, 64)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out;
}

HttpResponse loginRequired(std::string body) {
  HttpResponse r = textResponse(401, std::move(body));
  // Browsers ask for a user and password on this; Prometheus sends its basic_auth.
  r.headers.emplace_back("WWW-Authenticate", "Basic realm=\"vigil\", charset=\"UTF-8\"");
  return r;
}

}  // namespace

HttpAdmission HttpServer::Impl::admit(const HttpRequest& request, const HttpRoute* route,
                                      const std::string& peer) {
  if (route == nullptr) return {};  // 404: nothing to protect
  const bool loginsOn = security_.logins && !security_.logins->empty();
  if (route->access == RouteAccess::kCameraView && !loginsOn && !loopback_) {
    counters_.refusedWithoutLogins.fetch_add(1, std::memory_order_relaxed);
    return answer(textResponse(
        403, fmt::format("camera pictures and the status page are not served on {} without "
                         "logins. Give http.web_config a web configuration file with "
                         "basic_auth_users (a user from `vigil passwd USER`), or listen on "
                         "127.0.0.1. /metrics, /healthz and /readyz answer without a login.\n",
                         endpointText_)));
  }
  const bool needsLogin =
      loginsOn && (route->access == RouteAccess::kCameraView || security_.monitoringNeedsLogin);
  if (!needsLogin) return {};
  const std::string authorization(request.header("Authorization"));
  if (authorization.empty()) return answer(loginRequired("login required\n"));
  if (security_.logins->cached(authorization)) return {};

  const auto now = Clock::now();
  if (!throttle_.tryAttempt(peer, now)) {
    counters_.loginsThrottled.fetch_add(1, std::memory_order_relaxed);
    if (throttle_.shouldLog(peer, now)) {
      log_->warn("too many failed logins from {}: answering 429 until it slows down", peer);
    }
    HttpResponse r = textResponse(429, "too many failed logins; try again later\n");
    r.headers.emplace_back("Retry-After", std::to_string(throttle_.retryAfter(peer, now).count()));
    return answer(std::move(r));
  }
  auto credential = HttpLogins::parseBasic(authorization);
  if (!credential) {
    // A malformed header is a failed login too: it keeps its place taken.
    counters_.loginFailures.fetch_add(1, std::memory_order_relaxed);
    return answer(loginRequired("the Authorization header is not HTTP basic auth\n"));
  }
  if (pendingLoginChecks_ >= kMaxPendingLoginChecks) {
    throttle_.succeeded(peer);  // not this client's failure: its place back
    HttpResponse r = textResponse(503, "busy checking logins; try again\n");
    r.headers.emplace_back("Retry-After", "1");
    return answer(std::move(r));
  }
  HttpAdmission check;
  check.kind = HttpAdmission::Kind::kCheckLogin;
  check.credential = std::move(credential);
  check.logins = security_.logins;
  check.authorization = authorization;
  return check;
}

std::optional<HttpResponse> HttpServer::Impl::loginChecked(const HttpAdmission& admission,
                                                           const std::string& peer, bool ok) {
  if (ok) {
    admission.logins->remember(admission.authorization);
    throttle_.succeeded(peer);
    return std::nullopt;
  }
  counters_.loginFailures.fetch_add(1, std::memory_order_relaxed);
  if (throttle_.shouldLog(peer, Clock::now())) {
    log_->warn(
        "failed login from {} as '{}' (further failures from there are not logged for a "
        "minute; vigil_http_login_failures_total counts them)",
        peer, printable(admission.credential->user));
  }
  return loginRequired("wrong user or password\n");
}

}  // namespace vigil
