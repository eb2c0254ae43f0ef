#include "daemon/web/http_routes.h"

#include <fmt/format.h>

#include <algorithm>

namespace vigil {

namespace {

HttpResponse routeAnswer(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

}  // namespace

void HttpRoutes::add(std::string method, std::string path, HttpHandler handler,
                     RouteAccess access) {
  HttpRoute& route = exact_[std::move(path)];
  route.methods[std::move(method)] = std::move(handler);
  route.access = access;
}

void HttpRoutes::addPrefix(std::string method, std::string prefix, HttpHandler handler,
                           RouteAccess access) {
  auto it = std::find_if(prefixes_.begin(), prefixes_.end(),
                         [&](const auto& entry) { return entry.first == prefix; });
  if (it == prefixes_.end()) {
    it = prefixes_.emplace(prefixes_.end(), std::move(prefix), HttpRoute{});
  }
  it->second.methods[std::move(method)] = std::move(handler);
  it->second.access = access;
  std::stable_sort(prefixes_.begin(), prefixes_.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

const HttpRoute* HttpRoutes::find(HttpRequest& request) const {
  if (auto it = exact_.find(request.path); it != exact_.end()) return &it->second;
  for (const auto& [prefix, route] : prefixes_) {
    if (request.path.starts_with(prefix)) {
      request.subpath = request.path.substr(prefix.size());
      return &route;
    }
  }
  return nullptr;
}

HttpResponse HttpRoutes::handlerFailed(const HttpRequest& request, const std::string& why) {
  handlerErrors_.fetch_add(1, std::memory_order_relaxed);
  log_->error("{} {}: the handler {}", request.method, request.path, why);
  return routeAnswer(500, "internal error\n");
}

HttpResponse HttpRoutes::dispatch(HttpRequest& request, const HttpRoute* route) {
  if (route == nullptr) return routeAnswer(404, "not found\n");
  const MethodTable* table = &route->methods;
  auto handler = table->find(request.method);
  if (handler == table->end() && request.method == "HEAD") handler = table->find("GET");
  if (handler == table->end()) {
    std::string allow;
    for (const auto& [method, unused] : *table) {
      allow += allow.empty() ? method : ", " + method;
      if (method == "GET" && !table->contains("HEAD")) allow += ", HEAD";
    }
    return HttpResponse{
        .status = 405, .body = "method not allowed\n", .headers = {{"Allow", std::move(allow)}}};
  }
  try {
    HttpResponse response = handler->second(request);
    if (response.status < 200 || response.status > 599) {
      return handlerFailed(request, fmt::format("gave status {}", response.status));
    }
    return response;
  } catch (const std::exception& e) {
    return handlerFailed(request, fmt::format("threw: {}", e.what()));
  } catch (...) {
    return handlerFailed(request, "threw a non-exception");
  }
}

}  // namespace vigil
