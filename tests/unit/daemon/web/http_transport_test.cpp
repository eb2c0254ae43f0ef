#include "daemon/web/http_transport.h"

// clang-format off
// Boost 1.74's asio uses std::exchange without including <utility> (fails with g++ 12, C++20).
#include <utility>
#include <boost/asio/io_context.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
// clang-format on

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

namespace vigil {
namespace {

using boost::asio::ip::tcp;

// A connected pair on loopback: the server's end for the transport, the client's to talk to it.
struct TransportSockets {
  explicit TransportSockets(boost::asio::io_context& io) : server(io), client(io) {
    tcp::acceptor acceptor(io, tcp::endpoint(boost::asio::ip::address_v4::loopback(), 0));
    client.connect(acceptor.local_endpoint());
    acceptor.accept(server);
  }
  tcp::socket server;
  tcp::socket client;
};

boost::beast::flat_buffer bufferOf(const std::string& bytes) {
  boost::beast::flat_buffer buffer;
  auto space = buffer.prepare(bytes.size());
  std::memcpy(space.data(), bytes.data(), bytes.size());
  buffer.commit(bytes.size());
  return buffer;
}

TEST(HttpTransportTest, AClientHelloStartsTlsAndAPlainRequestDoesNot) {
  EXPECT_TRUE(HttpTransport::startsTlsHandshake(bufferOf(std::string("\x16\x03\x01", 3))));
  EXPECT_FALSE(HttpTransport::startsTlsHandshake(bufferOf("GET / HTTP/1.1\r\n")));
  EXPECT_FALSE(HttpTransport::startsTlsHandshake(boost::beast::flat_buffer()));
}

TEST(HttpTransportTest, APlainConnectionSpeaksTcpAndKnowsItsPeer) {
  boost::asio::io_context io;
  TransportSockets sockets(io);
  HttpTransport transport(std::move(sockets.server), nullptr);
  EXPECT_EQ(transport.peer(), "127.0.0.1");
  EXPECT_FALSE(transport.listensTls());
  transport.with([](auto& stream) {
    boost::asio::async_write(stream, boost::asio::buffer(std::string_view("hello")),
                             [](boost::beast::error_code ec, std::size_t) { EXPECT_FALSE(ec); });
  });
  io.run();
  std::string got(5, '\0');
  boost::asio::read(sockets.client, boost::asio::buffer(got));
  EXPECT_EQ(got, "hello");
}

TEST(HttpTransportTest, OnATlsListenerTheFirstBytesAreReadToTellWhichTheyAre) {
  boost::asio::io_context io;
  TransportSockets sockets(io);
  auto context = std::make_shared<boost::asio::ssl::context>(boost::asio::ssl::context::tls_server);
  HttpTransport transport(std::move(sockets.server), context);
  EXPECT_TRUE(transport.listensTls());
  boost::asio::write(sockets.client, boost::asio::buffer(std::string_view("GET / HTTP/1.1\r\n")));
  boost::beast::flat_buffer buffer;
  bool read = false;
  transport.readFirstBytes(buffer, std::chrono::seconds(5), [&](boost::beast::error_code ec) {
    EXPECT_FALSE(ec);
    read = true;
  });
  io.run();
  EXPECT_TRUE(read);
  EXPECT_EQ(boost::beast::buffers_to_string(buffer.data()), "GET / HTTP/1.1\r\n");
  EXPECT_FALSE(HttpTransport::startsTlsHandshake(buffer));
}

TEST(HttpTransportTest, APlainShutdownSendsFinThenDropsWhatTheClientSendsUntilItCloses) {
  boost::asio::io_context io;
  TransportSockets sockets(io);
  auto transport = std::make_shared<HttpTransport>(std::move(sockets.server), nullptr);
  std::weak_ptr<HttpTransport> alive = transport;
  transport->shutdown(transport);  // the transport is its own owner here
  transport.reset();
  io.poll();
  // Our FIN arrived: the client reads the end of the stream.
  char byte = 0;
  boost::system::error_code ec;
  sockets.client.read_some(boost::asio::buffer(&byte, 1), ec);
  EXPECT_EQ(ec, boost::asio::error::eof);
  // What it still sends is read and dropped; its close ends the connection and its owner.
  boost::asio::write(sockets.client, boost::asio::buffer(std::string(100, 'x')));
  EXPECT_FALSE(alive.expired());
  sockets.client.close();
  io.run();
  EXPECT_TRUE(alive.expired());
}

}  // namespace
}  // namespace vigil
