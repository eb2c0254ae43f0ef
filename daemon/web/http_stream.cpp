// Streams on an HttpServer connection (HttpStream in http_server.h): the server's count of open
// streams, and the writer that serves one (http_stream.h).
#include "daemon/web/http_stream.h"

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

HttpStreamWriter::HttpStreamWriter(HttpTransport& transport, std::shared_ptr<HttpStream> stream,
                                   std::chrono::milliseconds writeTimeout)
    : transport_(transport),
      stream_(std::move(stream)),
      writeTimeout_(writeTimeout),
      pollTimer_(transport.lowest().get_executor()) {}

void HttpStreamWriter::start(std::string head, std::shared_ptr<void> owner,
                             std::function<bool()> stopped, std::function<void()> ended) {
  bytes_ = std::move(head);
  stopped_ = std::move(stopped);
  ended_ = std::move(ended);
  writeBytes(std::move(owner));
}

void HttpStreamWriter::writeBytes(std::shared_ptr<void> owner) {
  transport_.lowest().expires_after(writeTimeout_);
  transport_.with([&](auto& stream) {
    asio::async_write(stream, asio::buffer(bytes_),
                      [this, owner = std::move(owner)](beast::error_code ec, std::size_t) mutable {
                        if (ec || stopped_()) return transport_.lowest().close();
                        transport_.lowest().expires_never();
                        nextPart(std::move(owner));
                      });
  });
}

void HttpStreamWriter::nextPart(std::shared_ptr<void> owner) {
  if (!stream_->open()) return ended_();
  if (auto part = stream_->next()) {
    bytes_ = std::move(*part);
    return writeBytes(std::move(owner));
  }
  pollTimer_.expires_after(kStreamPoll);
  pollTimer_.async_wait([this, owner = std::move(owner)](beast::error_code ec) mutable {
    if (ec || stopped_()) return;
    nextPart(std::move(owner));
  });
}

void HttpServer::Impl::Session::startStream(HttpResponse response) {
  if (auto busy = server_->openStream()) {
    return write(*busy, /*headOnly=*/false, /*keepAlive=*/false, version_);
  }
  streamWriter_.emplace(transport_, std::move(response.stream), server_->settings_.writeTimeout);
  streamWriter_->start(
      http_messages::streamHead(response, server_->security_.headers), shared_from_this(),
      [server = server_.get()] { return server->stopped_; }, [this] { shutdown(); });
}

}  // namespace vigil
