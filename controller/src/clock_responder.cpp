#include "clock_responder.hpp"

#include <sys/socket.h>

#include <array>

#include <openssl/rand.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "rocelab/protocol/clock_datagram.hpp"
#include "rocelab/protocol/stamped_udp.hpp"
#include "rocelab/protocol/timebase.hpp"

namespace rocelab::controller {

namespace asio = boost::asio;
using udp = asio::ip::udp;

status clock_responder::open(const asio::ip::address& address, std::uint16_t preferred_port) {
  boost::system::error_code ec;
  const std::string where = "clock service on " + address.to_string();
  socket_.open(address.is_v6() ? udp::v6() : udp::v4(), ec);
  if (ec) return status(error_code::io_error, where + ": " + ec.message(), ec.value());
  socket_.bind(udp::endpoint(address, preferred_port), ec);
  if (ec && preferred_port != 0) socket_.bind(udp::endpoint(address, 0), ec);
  if (ec) return status(error_code::io_error, where + ": bind: " + ec.message(), ec.value());
  if (auto st = protocol::enable_receive_timestamps(socket_.native_handle()); !st.ok())
    return st.with_context(where);
  port_ = socket_.local_endpoint(ec).port();
  return {};
}

void clock_responder::close() {
  boost::system::error_code ec;
  socket_.close(ec);
}

std::uint64_t clock_responder::admit() {
  std::uint64_t cookie = 0;
  // 0 means "no clock service" in a welcome; a failing RAND_bytes leaves the cookie 0 and
  // the agent then keeps to its TLS probes.
  while (cookie == 0 || cookies_.contains(cookie))
    if (RAND_bytes(reinterpret_cast<unsigned char*>(&cookie), sizeof cookie) != 1) return 0;
  cookies_.insert(cookie);
  return cookie;
}

asio::awaitable<void> clock_responder::serve() {
  while (socket_.is_open()) {
    auto [ec] = co_await socket_.async_wait(udp::socket::wait_read, asio::as_tuple(asio::use_awaitable));
    if (ec || !socket_.is_open()) co_return;
    answer_waiting();
  }
}

void clock_responder::answer_waiting() {
  std::array<std::uint8_t, protocol::clock_datagram_bytes + 1> buffer{};
  // Bounded: a flood is answered (or dropped) in rounds, between which the io thread runs
  // everything else it has.
  for (int n = 0; n < 256; ++n) {
    auto got = protocol::receive_stamped(socket_.native_handle(), buffer);
    if (!got || !*got) return;
    const protocol::stamped_datagram& d = **got;
    const std::int64_t t2 = protocol::received_monotonic_ns(d);
    auto probe = protocol::decode_clock_datagram(std::span(buffer.data(), std::min(d.bytes, buffer.size())));
    if (!probe || probe->kind != protocol::clock_datagram_kind::probe || !cookies_.contains(probe->cookie)) {
      ++counters_.dropped;
      continue;
    }
    protocol::clock_datagram answer = *probe;
    answer.kind = protocol::clock_datagram_kind::answer;
    answer.t2_ns = t2;
    answer.t3_ns = protocol::monotonic_ns();
    const auto bytes = protocol::encode(answer);
    if (::sendto(socket_.native_handle(), bytes.data(), bytes.size(), MSG_DONTWAIT,
                 reinterpret_cast<const sockaddr*>(&d.from), d.from_bytes) == static_cast<ssize_t>(bytes.size()))
      ++counters_.answered;
    else
      ++counters_.dropped;
  }
}

}  // namespace rocelab::controller
