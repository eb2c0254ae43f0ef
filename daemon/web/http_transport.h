#pragma once

// clang-format off
// Boost 1.74's asio uses std::exchange without including <utility> (fails with g++ 12, C++20).
#include <utility>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
// clang-format on

#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace vigil {

// One HTTP connection's bytes (an HttpServer connection's): the TCP stream, or TLS over it once
// the client has started a TLS handshake, and the connection's end: on a plain connection our
// FIN, then what the client still sends read and dropped (bounded) before the close, so that its
// kernel does not turn the close into a reset that destroys the unread answer; on TLS
// close_notify, waiting (bounded) for the client's.
// Threads: the server's io thread.
class HttpTransport {
 public:
  using TcpStream = boost::beast::tcp_stream;

  // `tls`: the listener's TLS context; nullptr: the listener speaks plain HTTP.
  HttpTransport(boost::asio::ip::tcp::socket socket,
                std::shared_ptr<boost::asio::ssl::context> tls);

  // The client's address ("unknown" when the socket has none), for logins and log lines.
  const std::string& peer() const { return peer_; }
  // The listener speaks TLS: the client's first bytes must start a handshake.
  bool listensTls() const { return context_ != nullptr; }
  // On a TLS listener, the client's first bytes (enough to tell a ClientHello from a plain
  // request) read into `buffer` within `deadline`: `done(ec)`, and startsTlsHandshake(buffer)
  // tells which they are.
  template <class Handler>
  void readFirstBytes(boost::beast::flat_buffer& buffer, std::chrono::milliseconds deadline,
                      Handler&& done) {
    tcp_.expires_after(deadline);
    tcp_.async_read_some(buffer.prepare(kFirstRead),
                         [&buffer, done = std::forward<Handler>(done)](boost::beast::error_code ec,
                                                                       std::size_t bytes) mutable {
                           if (!ec) buffer.commit(bytes);
                           done(ec);
                         });
  }
  // Whether `firstBytes` start a TLS handshake (a ClientHello's record), not plain HTTP.
  static bool startsTlsHandshake(const boost::beast::flat_buffer& firstBytes);

  // The TCP stream (under TLS, its lowest layer): deadlines and closes.
  TcpStream& lowest() { return tls_ ? boost::beast::get_lowest_layer(*tls_) : tcp_; }
  // Runs `op` on the stream the connection speaks: TLS or the TCP stream itself.
  template <class Op>
  void with(Op&& op) {
    if (tls_) {
      op(*tls_);
    } else {
      op(tcp_);
    }
  }
  // Starts TLS over the TCP stream with the client's first bytes, already read: `done(ec, used)`
  // with how many of them the handshake used.
  template <class Handler>
  void handshake(boost::asio::const_buffer firstBytes, Handler&& done) {
    tls_.emplace(std::move(tcp_), *context_);
    tls_->async_handshake(boost::asio::ssl::stream_base::server, firstBytes,
                          std::forward<Handler>(done));
  }
  // Ends the connection as the class comment says, within kLingerTime; `owner` (the connection)
  // lives until the close.
  void shutdown(std::shared_ptr<void> owner);

  static constexpr std::size_t kFirstRead = 1024;
  // How long, and how much, an ended connection is read for before its close.
  static constexpr std::chrono::seconds kLingerTime{2};
  static constexpr std::size_t kLingerBytes = 1 << 20;

 private:
  TcpStream tcp_;  // moved into tls_ once the client has started a TLS handshake
  std::shared_ptr<boost::asio::ssl::context> context_;
  std::optional<boost::beast::ssl_stream<TcpStream>> tls_;
  std::string peer_;
};

}  // namespace vigil
