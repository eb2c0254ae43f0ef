#include "daemon/web/http_transport.h"

namespace vigil {

namespace {

constexpr std::size_t kLingerChunk = 4096;
constexpr unsigned char kTlsHandshakeRecord = 0x16;

// What a lingering close keeps until it closes: the connection's owner and the bytes dropped.
struct Linger : std::enable_shared_from_this<Linger> {
  Linger(boost::beast::tcp_stream& stream, std::shared_ptr<void> keep)
      : tcp(stream), owner(std::move(keep)), discard(std::make_unique<char[]>(kLingerChunk)) {}

  void next() {
    tcp.async_read_some(boost::asio::buffer(discard.get(), kLingerChunk),
                        [self = shared_from_this()](boost::beast::error_code ec, std::size_t n) {
                          self->discarded += n;
                          if (ec || self->discarded > HttpTransport::kLingerBytes) {
                            return self->tcp.close();
                          }
                          self->next();
                        });
  }

  boost::beast::tcp_stream& tcp;
  std::shared_ptr<void> owner;
  std::unique_ptr<char[]> discard;
  std::size_t discarded = 0;
};

}  // namespace

HttpTransport::HttpTransport(boost::asio::ip::tcp::socket socket,
                             std::shared_ptr<boost::asio::ssl::context> tls)
    : tcp_(std::move(socket)), context_(std::move(tls)) {
  boost::beast::error_code ec;
  auto remote = tcp_.socket().remote_endpoint(ec);
  peer_ = ec ? std::string("unknown") : remote.address().to_string();
}

bool HttpTransport::startsTlsHandshake(const boost::beast::flat_buffer& firstBytes) {
  return firstBytes.size() > 0 &&
         *static_cast<const unsigned char*>(firstBytes.data().data()) == kTlsHandshakeRecord;
}

void HttpTransport::shutdown(std::shared_ptr<void> owner) {
  lowest().expires_after(kLingerTime);
  if (tls_) {
    tls_->async_shutdown(
        [this, owner = std::move(owner)](boost::beast::error_code) { lowest().close(); });
    return;
  }
  boost::beast::error_code ignored;
  tcp_.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_send, ignored);
  std::make_shared<Linger>(tcp_, std::move(owner))->next();
}

}  // namespace vigil
