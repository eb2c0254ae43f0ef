// Streams on an HttpServer connection (HttpStream in http_server.h): the header once, then each
// part the stream gives, written one at a time.
#include <boost/asio/write.hpp>

#include "daemon/web/http_messages.h"
#include "daemon/web/http_server_impl.h"

namespace vigil {

using namespace http_internal;

std::optional<HttpResponse> HttpServer::Impl::openStream() {
  const std::size_t limit = std::min(settings_.maxStreams, settings_.maxConnections / 2);
  if (streamsOpen_ >= limit) {
    counters_.streamsRefused.fetch_add(1, std::memory_order_relaxed);
    HttpResponse busy = textResponse(
        503, fmt::format("{} live streams are open (the limit); try again later\n", limit));
    busy.headers.emplace_back("Retry-After", "5");
    return busy;
  }
  ++streamsOpen_;
  counters_.streams.fetch_add(1, std::memory_order_relaxed);
  count(200);
  return std::nullopt;
}

void HttpServer::Impl::streamClosed() {
  --streamsOpen_;
  counters_.streams.fetch_sub(1, std::memory_order_relaxed);
}

void HttpServer::Impl::Session::startStream(HttpResponse response) {
  if (auto busy = server_->openStream()) {
    return write(*busy, /*headOnly=*/false, /*keepAlive=*/false, version_);
  }
  stream_ = std::move(response.stream);
  streamBytes_ = http_messages::streamHead(response, server_->security_.headers);
  pollTimer_.emplace(lowest().get_executor());
  writeStreamBytes();
}

void HttpServer::Impl::Session::writeStreamBytes() {
  // A viewer that reads nothing for writeTimeout is closed (the part stays unsent meanwhile, and
  // no newer one queues behind it).
  lowest().expires_after(server_->settings_.writeTimeout);
  withStream([this](auto& stream) {
    asio::async_write(stream, asio::buffer(streamBytes_),
                      [self = shared_from_this()](beast::error_code ec, std::size_t) {
                        if (ec || self->server_->stopped_) return self->lowest().close();
                        self->lowest().expires_never();
                        self->nextStreamPart();
                      });
  });
}

void HttpServer::Impl::Session::nextStreamPart() {
  if (!stream_->open()) return shutdown();
  if (auto part = stream_->next()) {
    streamBytes_ = std::move(*part);
    return writeStreamBytes();
  }
  pollTimer_->expires_after(kStreamPoll);
  pollTimer_->async_wait([self = shared_from_this()](beast::error_code ec) {
    if (ec || self->server_->stopped_) return;
    self->nextStreamPart();
  });
}

}  // namespace vigil
