#pragma once
// A peer that speaks the controller's protocol by hand over a blocking TLS-PSK stream: what
// an authenticated but misbehaving agent, client or worker sends (tests/controller, and
// bench/controller's abuse modes). Loopback only; not for production use.

#include <sys/socket.h>
#include <sys/time.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>

#include "rocelab/common/result.hpp"
#include "rocelab/protocol/messages.hpp"
#include "rocelab/protocol/security.hpp"

namespace rocelab::test {

inline const std::string test_token = "rocelab-test-token-0123456789abcdef";

// Reads give up after `receive_timeout_ms`.
class authenticated_peer {
 public:
  authenticated_peer(boost::asio::io_context& io, std::uint16_t port, const std::string& token = test_token,
                     int receive_timeout_ms = 3000)
      : ctx_(protocol::tls_context::make(protocol::tls_role::client, token).value()), s_(io, ctx_->native()) {
    s_.lowest_layer().connect({boost::asio::ip::make_address("127.0.0.1"), port}, ec_);
    if (ec_) return;
    timeval tv{receive_timeout_ms / 1000, (receive_timeout_ms % 1000) * 1000};
    ::setsockopt(s_.next_layer().native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    s_.handshake(boost::asio::ssl::stream_base::client, ec_);
  }
  [[nodiscard]] bool ok() const { return !ec_; }
  // False when the write failed (the server closed).
  bool write(const std::vector<std::uint8_t>& bytes) {
    boost::system::error_code ec;
    boost::asio::write(s_, boost::asio::buffer(bytes), ec);
    return !ec;
  }
  bool send(const protocol::message& m) {
    auto frame = protocol::encode(m);
    return frame && write(*frame);
  }
  // The next message; error cancelled when nothing came within the receive timeout, any
  // other error when the server closed or sent something that does not decode.
  result<protocol::message> read() {
    std::array<std::uint8_t, protocol::frame_header_bytes> h{};
    boost::system::error_code ec;
    boost::asio::read(s_, boost::asio::buffer(h), ec);
    if (ec == boost::asio::error::would_block || ec == boost::asio::error::try_again)
      return status(error_code::cancelled, "nothing within the receive timeout");
    if (ec) return status(error_code::io_error, "closed: " + ec.message());
    auto header = protocol::parse_header(h);
    if (!header) return header.error();
    std::vector<std::uint8_t> body(header->body_bytes);
    boost::asio::read(s_, boost::asio::buffer(body), ec);
    if (ec) return status(error_code::io_error, "closed: " + ec.message());
    return protocol::decode_body(header->type, body);
  }
  // Frames until the server closes or 3 s pass; true when it closed.
  bool read_until_closed(std::vector<protocol::message>& seen) {
    for (int i = 0; i < 200; ++i) {
      auto m = read();
      if (!m) return m.error().code() != error_code::cancelled;
      seen.push_back(*m);
    }
    return false;
  }

 private:
  std::unique_ptr<protocol::tls_context> ctx_;
  boost::asio::ssl::stream<boost::asio::ip::tcp::socket> s_;
  boost::system::error_code ec_;
};

}  // namespace rocelab::test
