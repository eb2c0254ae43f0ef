#pragma once

#include <boost/beast/http.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "daemon/web/http_server.h"

namespace spdlog {
class logger;
}  // namespace spdlog

// A request and a response as Beast has them and as the server's handlers see them (HttpRequest,
// HttpResponse): what a connection (HttpServer::Impl::Session) converts, with no I/O.
namespace vigil::http_messages {

using Headers = std::vector<std::pair<std::string, std::string>>;
using BeastRequest = boost::beast::http::request<boost::beast::http::string_body>;
using BeastResponse = boost::beast::http::response<boost::beast::http::string_body>;

// The request as the handlers see it; nullopt when its target is not a path (absolute-form,
// '*': not ours to serve).
std::optional<HttpRequest> requestOf(const BeastRequest& message);

// `in` as Beast's response: the security headers (`always`), then its own (one with CR, LF or ':'
// in it dropped, and said in `log`), Server, Content-Type, the length (none for 204 and 304) and
// the body (moved; none for HEAD), keep-alive.
BeastResponse responseOf(HttpResponse& in, const Headers& always, bool headOnly, bool keepAlive,
                         unsigned version, spdlog::logger& log);

// The answer to a request that cannot be served: the status, its reason as the body.
HttpResponse statusAnswer(boost::beast::http::status status);

// A stream's header block, up to and with its blank line: 200, Server, its Content-Type,
// Connection: close, the security headers, its own (one with CR, LF or ':' in it left out).
std::string streamHead(const HttpResponse& response, const Headers& always);

// The answer a failed read of a request deserves: 431 for a header too large, 413 for a body too
// large, 400 for a malformed request; nullopt when there is nobody to answer (timeouts, resets,
// a client gone mid-request, TLS errors).
std::optional<boost::beast::http::status> answerToReadError(
    const boost::beast::error_code& ec,
    const boost::beast::http::request_parser<boost::beast::http::string_body>& parser);

}  // namespace vigil::http_messages
