#include "daemon/web/http_routes.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace vigil {
namespace {

HttpRequest routedRequest(std::string method, std::string path) {
  HttpRequest r;
  r.method = std::move(method);
  r.path = std::move(path);
  return r;
}

HttpHandler answering(std::string body) {
  return [body](const HttpRequest& request) {
    HttpResponse response;
    response.body = body + " " + request.method + " " + request.subpath;
    return response;
  };
}

TEST(HttpRoutesTest, AnExactPathComesFirstThenTheLongestPrefixWithItsSubpath) {
  std::atomic<std::uint64_t> errors{0};
  HttpRoutes routes(errors);
  routes.addPrefix("GET", "/api/", answering("api"), RouteAccess::kMonitoring);
  routes.addPrefix("GET", "/api/cameras/", answering("cameras"), RouteAccess::kCameraView);
  routes.add("GET", "/api/cameras/list", answering("list"), RouteAccess::kMonitoring);

  HttpRequest exact = routedRequest("GET", "/api/cameras/list");
  const HttpRoute* route = routes.find(exact);
  ASSERT_NE(route, nullptr);
  EXPECT_EQ(route->access, RouteAccess::kMonitoring);
  EXPECT_EQ(routes.dispatch(exact, route).body, "list GET ");

  HttpRequest longest = routedRequest("GET", "/api/cameras/front/latest.jpg");
  route = routes.find(longest);
  ASSERT_NE(route, nullptr);
  EXPECT_EQ(route->access, RouteAccess::kCameraView);
  EXPECT_EQ(routes.dispatch(longest, route).body, "cameras GET front/latest.jpg");

  HttpRequest nowhere = routedRequest("GET", "/metrics");
  EXPECT_EQ(routes.find(nowhere), nullptr);
  EXPECT_EQ(routes.dispatch(nowhere, nullptr).status, 404);
}

TEST(HttpRoutesTest, HeadRunsGetAndAnotherMethodIs405WithAllow) {
  std::atomic<std::uint64_t> errors{0};
  HttpRoutes routes(errors);
  routes.add("GET", "/x", answering("x"), RouteAccess::kMonitoring);
  routes.add("POST", "/x", answering("posted"), RouteAccess::kMonitoring);
  HttpRequest head = routedRequest("HEAD", "/x");
  EXPECT_EQ(routes.dispatch(head, routes.find(head)).body, "x HEAD ");
  HttpRequest put = routedRequest("PUT", "/x");
  HttpResponse refused = routes.dispatch(put, routes.find(put));
  EXPECT_EQ(refused.status, 405);
  ASSERT_EQ(refused.headers.size(), 1U);
  EXPECT_EQ(refused.headers[0].first, "Allow");
  EXPECT_EQ(refused.headers[0].second, "GET, HEAD, POST");
  EXPECT_EQ(errors.load(), 0U);
}

TEST(HttpRoutesTest, AFailingHandlerIs500AndCounted) {
  std::atomic<std::uint64_t> errors{0};
  HttpRoutes routes(errors);
  routes.add(
      "GET", "/throws", [](const HttpRequest&) -> HttpResponse { throw std::runtime_error("no"); },
      RouteAccess::kMonitoring);
  routes.add(
      "GET", "/odd",
      [](const HttpRequest&) {
        HttpResponse odd;
        odd.status = 42;
        return odd;
      },
      RouteAccess::kMonitoring);
  routes.add(
      "GET", "/int", [](const HttpRequest&) -> HttpResponse { throw 7; }, RouteAccess::kMonitoring);
  for (const char* path : {"/throws", "/odd", "/int"}) {
    HttpRequest request = routedRequest("GET", path);
    HttpResponse response = routes.dispatch(request, routes.find(request));
    EXPECT_EQ(response.status, 500) << path;
    EXPECT_EQ(response.body, "internal error\n") << path;
  }
  EXPECT_EQ(errors.load(), 3U);
}

}  // namespace
}  // namespace vigil
