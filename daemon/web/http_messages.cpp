#include "daemon/web/http_messages.h"

#include <spdlog/logger.h>

namespace vigil::http_messages {

namespace http = boost::beast::http;

namespace {

// Boost 1.74's beast::string_view is boost::string_view, which std::string cannot take directly.
std::string str(boost::beast::string_view s) { return std::string(s.data(), s.size()); }

bool unsafeHeader(const std::string& name, const std::string& value) {
  return name.find_first_of("\r\n:") != std::string::npos ||
         value.find_first_of("\r\n") != std::string::npos;
}

}  // namespace

std::optional<HttpRequest> requestOf(const BeastRequest& message) {
  HttpRequest request;
  request.method = str(message.method_string());
  const std::string target = str(message.target());
  if (target.empty() || target.front() != '/') return std::nullopt;
  auto question = target.find('?');
  request.path = target.substr(0, question);
  if (question != std::string::npos) request.query = target.substr(question + 1);
  for (const auto& field : message) {
    request.headers.emplace_back(str(field.name_string()), str(field.value()));
  }
  request.body = message.body();
  return request;
}

BeastResponse responseOf(HttpResponse& in, const Headers& always, bool headOnly, bool keepAlive,
                         unsigned version, spdlog::logger& log) {
  BeastResponse out;
  out.version(version == 10 ? 10 : 11);
  out.result(static_cast<unsigned>(in.status));
  for (const auto& [name, value] : always) out.set(name, value);
  for (auto& [name, value] : in.headers) {
    if (unsafeHeader(name, value)) {
      log.warn("dropped header '{}': CR, LF or ':' in it", name);
      continue;
    }
    out.insert(name, value);
  }
  out.set(http::field::server, "vigil");
  if (!in.contentType.empty()) out.set(http::field::content_type, in.contentType);
  if (in.status == 204 || in.status == 304) {
    out.erase(http::field::content_length);
  } else {
    out.content_length(in.body.size());
    if (!headOnly) out.body() = std::move(in.body);
  }
  out.keep_alive(keepAlive);
  return out;
}

HttpResponse statusAnswer(http::status status) {
  HttpResponse response;
  response.status = static_cast<int>(status);
  response.body = str(http::obsolete_reason(status)) + "\n";
  return response;
}

std::string streamHead(const HttpResponse& response, const Headers& always) {
  std::string head = "HTTP/1.1 200 OK\r\nServer: vigil\r\nContent-Type: " + response.contentType +
                     "\r\nConnection: close\r\n";
  for (const auto& [name, value] : always) head += name + ": " + value + "\r\n";
  for (const auto& [name, value] : response.headers) {
    if (!unsafeHeader(name, value)) head += name + ": " + value + "\r\n";
  }
  return head + "\r\n";
}

std::optional<http::status> answerToReadError(
    const boost::beast::error_code& ec, const http::request_parser<http::string_body>& parser) {
  if (ec == http::error::header_limit ||
      (ec == http::error::buffer_overflow && !parser.is_header_done())) {
    return http::status::request_header_fields_too_large;
  }
  if (ec == http::error::body_limit || ec == http::error::buffer_overflow) {
    return http::status::payload_too_large;
  }
  if (ec.category() == make_error_code(http::error::bad_version).category() &&
      ec != http::error::partial_message) {
    return http::status::bad_request;
  }
  return std::nullopt;
}

}  // namespace vigil::http_messages
