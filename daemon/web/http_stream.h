#pragma once

// clang-format off
// Boost 1.74's asio uses std::exchange without including <utility> (fails with g++ 12, C++20).
#include <utility>
#include <boost/asio/steady_timer.hpp>
// clang-format on

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "daemon/web/http_server.h"
#include "daemon/web/http_transport.h"

namespace vigil {

// A stream served on a connection (HttpResponse::stream: a camera's MJPEG): its header once,
// then each part the stream gives, written one at a time, the stream asked again every
// kStreamPoll while it has nothing new. A viewer that reads nothing for `writeTimeout` is closed
// (the part stays unsent meanwhile, and no newer one queues behind it).
// Threads: the server's io thread.
class HttpStreamWriter {
 public:
  HttpStreamWriter(HttpTransport& transport, std::shared_ptr<HttpStream> stream,
                   std::chrono::milliseconds writeTimeout);

  // Writes `head`, then the parts until the stream ends (then `ended()`: the connection ends
  // politely), a write fails or times out (the connection closes), or `stopped()` says the
  // server stops. `owner` (the connection, which owns this writer) lives until then.
  void start(std::string head, std::shared_ptr<void> owner, std::function<bool()> stopped,
             std::function<void()> ended);
  // The server stops: a stream waiting for its next part stops waiting.
  void cancel() { pollTimer_.cancel(); }

 private:
  void writeBytes(std::shared_ptr<void> owner);
  void nextPart(std::shared_ptr<void> owner);

  HttpTransport& transport_;
  std::shared_ptr<HttpStream> stream_;
  std::chrono::milliseconds writeTimeout_;
  std::function<bool()> stopped_;
  std::function<void()> ended_;
  std::string bytes_;                    // the part being written
  boost::asio::steady_timer pollTimer_;  // a stream with nothing new waits on it
};

}  // namespace vigil
