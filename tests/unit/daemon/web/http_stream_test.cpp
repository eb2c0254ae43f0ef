#include "daemon/web/http_stream.h"

// clang-format off
// Boost 1.74's asio uses std::exchange without including <utility> (fails with g++ 12, C++20).
#include <utility>
#include <boost/asio/io_context.hpp>
#include <boost/asio/read.hpp>
// clang-format on

#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <string>

namespace vigil {
namespace {

using boost::asio::ip::tcp;

// A stream with parts to give; once they are taken it has nothing new `idleAsks` times, then
// ends.
class ScriptedStream : public HttpStream {
 public:
  ScriptedStream(std::deque<std::string> parts, int idleAsks)
      : parts_(std::move(parts)), idleAsks_(idleAsks) {}
  std::optional<std::string> next() override {
    ++asked;
    if (parts_.empty()) {
      --idleAsks_;
      return std::nullopt;
    }
    std::string part = std::move(parts_.front());
    parts_.pop_front();
    return part;
  }
  bool open() const override { return !parts_.empty() || idleAsks_ > 0; }
  int asked = 0;

 private:
  std::deque<std::string> parts_;
  int idleAsks_;
};

// The server's end of a loopback connection as a plain transport, and the viewer's end.
struct StreamConnection {
  explicit StreamConnection(boost::asio::io_context& io) : viewer(io) {
    tcp::acceptor acceptor(io, tcp::endpoint(boost::asio::ip::address_v4::loopback(), 0));
    viewer.connect(acceptor.local_endpoint());
    tcp::socket server(io);
    acceptor.accept(server);
    transport = std::make_unique<HttpTransport>(std::move(server), nullptr);
  }
  // Everything the server wrote until it closed.
  std::string received() {
    std::string all;
    boost::system::error_code ec;
    boost::asio::read(viewer, boost::asio::dynamic_buffer(all), ec);
    return all;
  }
  tcp::socket viewer;
  std::unique_ptr<HttpTransport> transport;
};

TEST(HttpStreamWriterTest, WritesTheHeadThenEachPartAndWaitsForNewOnesUntilTheStreamEnds) {
  boost::asio::io_context io;
  StreamConnection connection(io);
  auto stream = std::make_shared<ScriptedStream>(std::deque<std::string>{"a", "b"}, 2);
  auto owner = std::make_shared<int>(0);
  std::weak_ptr<int> alive = owner;
  HttpStreamWriter writer(*connection.transport, stream, std::chrono::seconds(5));
  bool ended = false;
  writer.start(
      "HEAD;", std::move(owner), [] { return false; },
      [&] {
        ended = true;
        connection.transport->lowest().close();
      });
  io.run();
  EXPECT_TRUE(ended);
  EXPECT_EQ(stream->asked, 4);  // a, b, then nothing new twice (kStreamPoll apart)
  EXPECT_TRUE(alive.expired());
  EXPECT_EQ(connection.received(), "HEAD;ab");
}

TEST(HttpStreamWriterTest, WhenTheServerStopsTheConnectionClosesWithoutEnding) {
  boost::asio::io_context io;
  StreamConnection connection(io);
  auto stream = std::make_shared<ScriptedStream>(std::deque<std::string>{"a"}, 0);
  HttpStreamWriter writer(*connection.transport, stream, std::chrono::seconds(5));
  bool ended = false;
  writer.start(
      "HEAD;", std::make_shared<int>(0), [] { return true; }, [&] { ended = true; });
  io.run();
  EXPECT_FALSE(ended);
  EXPECT_EQ(stream->asked, 0);
  EXPECT_EQ(connection.received(), "HEAD;");
}

}  // namespace
}  // namespace vigil
