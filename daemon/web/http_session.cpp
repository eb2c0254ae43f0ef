// One HTTP connection of HttpServer (http_server.h has the contract).
#include <boost/asio/post.hpp>
#include <limits>
#include <string_view>

#include "daemon/web/http_messages.h"
#include "daemon/web/http_server_impl.h"

namespace vigil {

using namespace http_internal;

namespace {

// What a failed handshake's reason tells the user to do, after the reason itself.
std::string_view handshakeFailureHint(std::string_view reason) {
  for (std::string_view refused : {"bad certificate", "unknown ca", "certificate unknown",
                                   "certificate expired", "unsupported certificate"}) {
    if (reason.find(refused) != std::string_view::npos) {
      return ": the client refused this server's certificate (its names, subjectAltName, must "
             "cover the host name or IP address the client connects to, it must be in date, and "
             "the client must trust the CA that signed it; `vigil doctor` checks them)";
    }
  }
  for (std::string_view mismatch :
       {"wrong version number", "unsupported protocol", "no shared cipher", "version too low"}) {
    if (reason.find(mismatch) != std::string_view::npos) {
      return ": the client and this server share no TLS version or cipher (web_config's "
             "min_version and cipher_suites decide what this server takes)";
    }
  }
  return "";
}

}  // namespace

HttpServer::Impl::Session::Session(std::shared_ptr<Impl> server, tcp::socket socket,
                                   std::shared_ptr<asio::ssl::context> tls)
    : server_(std::move(server)),
      transport_(std::move(socket), std::move(tls)),
      buffer_(server_->settings_.maxRequestBytes) {
  server_->sessions_.insert(this);
  server_->counters_.open.fetch_add(1, std::memory_order_relaxed);
}

HttpServer::Impl::Session::~Session() {
  if (streamWriter_) server_->streamClosed();
  server_->sessions_.erase(this);
  server_->counters_.open.fetch_sub(1, std::memory_order_relaxed);
}

void HttpServer::Impl::Session::start() {
  if (!transport_.listensTls()) return readHeader();
  // The handshake has the same deadline as a request, and waits like one: a client that never
  // finishes it is closed at the deadline or to make room, as a slow request is.
  waitFromNow();
  transport_.readFirstBytes(
      buffer_, server_->settings_.readTimeout,
      [self = shared_from_this()](beast::error_code ec) { self->onFirstBytes(ec); });
}

void HttpServer::Impl::Session::onFirstBytes(beast::error_code ec) {
  if (ec || server_->stopped_) return transport_.lowest().close();
  if (!HttpTransport::startsTlsHandshake(buffer_)) {
    // Plain HTTP on the TLS port: say so in clear text rather than close without a word.
    server_->tlsHandshakeFailed(transport_.peer(),
                                "plain HTTP sent to the TLS port (use https://)");
    waiting_ = false;
    HttpResponse response =
        textResponse(400, "this port speaks HTTPS: use https:// (plain HTTP is not served here)\n");
    return write(response, /*headOnly=*/false, /*keepAlive=*/false, /*version=*/11);
  }
  transport_.handshake(buffer_.data(),
                       [self = shared_from_this()](beast::error_code e, std::size_t used) {
                         self->onHandshake(e, used);
                       });
}

void HttpServer::Impl::Session::onHandshake(beast::error_code ec, std::size_t used) {
  if (ec) {
    if (ec != asio::error::operation_aborted && !server_->stopped_) {
      server_->tlsHandshakeFailed(transport_.peer(), ec.message());
    }
    return transport_.lowest().close();
  }
  buffer_.consume(used);
  readHeader();
}

void HttpServer::Impl::Session::readHeader() {
  waitFromNow();
  const std::size_t limit = server_->settings_.maxRequestBytes;
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(
      std::min<std::size_t>(limit, std::numeric_limits<std::uint32_t>::max())));
  parser_->body_limit(limit);
  // One deadline for the whole request, header and body.
  transport_.lowest().expires_after(server_->settings_.readTimeout);
  transport_.with([this](auto& stream) {
    http::async_read_header(stream, buffer_, *parser_,
                            [self = shared_from_this()](beast::error_code ec, std::size_t bytes) {
                              self->onHeader(ec, bytes);
                            });
  });
}

void HttpServer::Impl::Session::onHeader(beast::error_code ec, std::size_t headerBytes) {
  if (ec) return onReadError(ec);
  if (server_->stopped_) return;
  const std::size_t limit = server_->settings_.maxRequestBytes;
  const std::size_t left = headerBytes < limit ? limit - headerBytes : 0;
  auto length = parser_->content_length();
  if (length && *length > left) return answerError(http::status::payload_too_large);
  if (parser_->is_done()) return handle();
  parser_->body_limit(left);  // chunked bodies are checked as they arrive
  transport_.with([this](auto& stream) {
    http::async_read(
        stream, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code e, std::size_t) { self->onBody(e); });
  });
}

void HttpServer::Impl::Session::onBody(beast::error_code ec) {
  if (ec) return onReadError(ec);
  if (server_->stopped_) return;
  handle();
}

void HttpServer::Impl::Session::onReadError(beast::error_code ec) {
  if (ec == asio::error::operation_aborted || server_->stopped_) return;
  if (ec == http::error::end_of_stream || ec == asio::ssl::error::stream_truncated) {
    return shutdown();  // the client closed between requests
  }
  if (ec == beast::error::timeout) {
    // Beast has closed the socket already. An idle keep-alive connection is no error.
    if (parser_->got_some()) server_->counters_.readTimeouts.fetch_add(1);
    return;
  }
  if (auto status = http_messages::answerToReadError(ec, *parser_)) return answerError(*status);
  // Resets, a client gone mid-request (partial_message), TLS errors: nobody to answer.
  transport_.lowest().close();
}

void HttpServer::Impl::Session::answerError(http::status status) {
  waiting_ = false;
  server_->counters_.badRequests.fetch_add(1, std::memory_order_relaxed);
  HttpResponse response = http_messages::statusAnswer(status);
  // What follows a malformed or oversized request cannot be trusted to start a new one.
  write(response, /*headOnly=*/false, /*keepAlive=*/false, /*version=*/11);
}

void HttpServer::Impl::Session::handle() {
  waiting_ = false;
  const auto& message = parser_->get();
  auto request = http_messages::requestOf(message);
  if (!request) return answerError(http::status::bad_request);
  request_ = std::move(*request);
  headOnly_ = request_.method == "HEAD";
  keepAlive_ = message.keep_alive();
  version_ = message.version();
  const HttpRoute* route = server_->routes_.find(request_);
  HttpAdmission admission = server_->admit(request_, route, transport_.peer());
  switch (admission.kind) {
    case HttpAdmission::Kind::kServe:
      return respond(server_->routes_.dispatch(request_, route));
    case HttpAdmission::Kind::kAnswer:
      return respond(std::move(admission.answer));
    case HttpAdmission::Kind::kCheckLogin:
      return checkLogin(std::move(admission));
  }
}

// bcrypt takes tens of milliseconds: on the login thread, then back here to answer.
void HttpServer::Impl::Session::checkLogin(HttpAdmission admission) {
  ++server_->pendingLoginChecks_;
  auto executor = transport_.lowest().get_executor();
  asio::post(*server_->loginThread_,
             [self = shared_from_this(), admission = std::move(admission), executor]() mutable {
               const bool ok = admission.logins->verify(*admission.credential);
               // Moved into the io thread's handler, so that this thread never holds the last
               // reference.
               asio::post(executor, [self = std::move(self), admission = std::move(admission), ok] {
                 --self->server_->pendingLoginChecks_;
                 if (self->server_->stopped_) return;
                 auto refused = self->server_->loginChecked(admission, self->transport_.peer(), ok);
                 if (refused) return self->respond(std::move(*refused));
                 const HttpRoute* route = self->server_->routes_.find(self->request_);
                 self->respond(self->server_->routes_.dispatch(self->request_, route));
               });
             });
}

void HttpServer::Impl::Session::respond(HttpResponse response) {
  if (response.stream && !headOnly_) return startStream(std::move(response));
  write(response, headOnly_, keepAlive_, version_);
}

void HttpServer::Impl::Session::write(HttpResponse& in, bool headOnly, bool keepAlive,
                                      unsigned version) {
  response_ = http_messages::responseOf(in, server_->security_.headers, headOnly, keepAlive,
                                        version, *server_->log_);
  server_->count(in.status);
  close_ = !keepAlive;
  transport_.lowest().expires_after(server_->settings_.writeTimeout);
  transport_.with([this](auto& stream) {
    http::async_write(
        stream, response_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->onWrite(ec); });
  });
}

void HttpServer::Impl::Session::onWrite(beast::error_code ec) {
  if (ec || server_->stopped_) return transport_.lowest().close();
  response_ = {};  // a large body (a JPEG) need not stay while the connection idles
  if (close_) return shutdown();
  readHeader();
}

void HttpServer::Impl::Session::shutdown() {
  waitFromNow();
  transport_.shutdown(shared_from_this());
}

void HttpServer::Impl::tlsHandshakeFailed(const std::string& peer, const std::string& reason) {
  counters_.tlsHandshakeFailures.fetch_add(1, std::memory_order_relaxed);
  if (!handshakeLog_.due(peer, std::chrono::steady_clock::now())) return;
  log_->warn(
      "TLS handshake with {} failed: {}{} (at most one line a minute per address; all counted "
      "in vigil_http_tls_handshake_failures_total)",
      peer, reason, handshakeFailureHint(reason));
}

}  // namespace vigil
