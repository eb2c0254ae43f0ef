#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "daemon/base/log.h"
#include "daemon/web/http_server.h"

namespace vigil {

using MethodTable = std::map<std::string, HttpHandler>;

struct HttpRoute {
  MethodTable methods;
  RouteAccess access = RouteAccess::kCameraView;
};

// HttpServer's routes: the route of a request's path (its exact path, else the longest prefix,
// which sets the request's subpath), and its handler run for the request's method. A handler
// that throws or gives a status outside 200..599 is answered 500, counted in `handlerErrors`
// and logged.
// Threads: routes are added before the server starts; then the server's io thread only.
class HttpRoutes {
 public:
  explicit HttpRoutes(std::atomic<std::uint64_t>& handlerErrors) : handlerErrors_(handlerErrors) {}

  // The handler of `method` on `path` (replacing one there), and who may see the path.
  void add(std::string method, std::string path, HttpHandler handler, RouteAccess access);
  // The same for every path that starts with `prefix`.
  void addPrefix(std::string method, std::string prefix, HttpHandler handler, RouteAccess access);
  // The route of the request's path (and its subpath set), or nullptr.
  const HttpRoute* find(HttpRequest& request) const;
  // Runs the route's handler: 404, 405 (with Allow) or 500 when there is none or it fails. HEAD
  // runs GET's handler when it has none of its own.
  HttpResponse dispatch(HttpRequest& request, const HttpRoute* route);

 private:
  HttpResponse handlerFailed(const HttpRequest& request, const std::string& why);

  std::map<std::string, HttpRoute> exact_;
  std::vector<std::pair<std::string, HttpRoute>> prefixes_;  // longest first
  std::atomic<std::uint64_t>& handlerErrors_;
  std::shared_ptr<spdlog::logger> log_ = logger("http");
};

}  // namespace vigil
