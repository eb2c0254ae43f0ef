// Fuzzes the HTTP request path end to end: a real HttpServer on a loopback port with the
// daemon's kinds of routes (exact, prefix, POST with a body, one behind a login) gets each input
// as the bytes of one connection, then end of stream. Whatever arrives must be answered
// (200/4xx/5xx) or dropped, never crash the server or leave it unable to serve the next
// connection. The input is also parsed as an Authorization header's value, directly (the server
// throttles logins after a burst of failures, which would keep most inputs from the parser).
#include <map>
#include <string_view>

#include "daemon/web/http_logins.h"
#include "tests/fuzz/fuzz_http_server.h"

namespace {

void setUp(vigil::HttpServer& server) {
  vigil::fuzz::addMetricsRoute(server);
  server.route(
      "POST", "/echo",
      [](const vigil::HttpRequest& request) {
        vigil::HttpResponse response;
        response.body = request.body + std::string(request.header("x-echo"));
        response.headers.emplace_back("X-Query", request.query);  // may hold CR/LF: dropped
        return response;
      },
      vigil::RouteAccess::kMonitoring);
  server.routePrefix(
      "GET", "/api/cameras/",
      [](const vigil::HttpRequest& request) {
        vigil::HttpResponse response;
        if (request.subpath.empty()) response.status = 404;
        response.body = request.subpath;
        return response;
      },
      vigil::RouteAccess::kMonitoring);
  server.route("GET", "/camera", [](const vigil::HttpRequest&) {
    vigil::HttpResponse response;
    response.body = "a picture\n";
    return response;
  });  // a camera view: behind the login
  // bcrypt cost 10 of "fuzz": a right login ("Basic ZnV6ejpmdXp6", fuzz:fuzz) is served.
  vigil::HttpSecurity security;
  security.logins = std::make_shared<vigil::HttpLogins>(std::map<std::string, std::string>{
      {"fuzz", "$2b$10$SgTE1imHJIgVbcnKdkfnH.zZjLr4bMRKRNawkAiRNxs7TOVUEvrue"}});
  server.setSecurity(std::move(security));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static vigil::fuzz::FuzzHttpServer server(setUp);
  vigil::HttpLogins::parseBasic(std::string_view(reinterpret_cast<const char*>(data), size));
  vigil::fuzz::exchange(server.port(), data, size);
  return 0;
}
