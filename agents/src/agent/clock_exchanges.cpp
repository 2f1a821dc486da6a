#include "clock_exchanges.hpp"

#include <sys/socket.h>

#include <array>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "rocelab/protocol/clock_datagram.hpp"
#include "rocelab/protocol/stamped_udp.hpp"

namespace rocelab::agents::agent {

namespace asio = boost::asio;
using udp = asio::ip::udp;

namespace {

constexpr auto nothrow = asio::as_tuple(asio::use_awaitable);

// Reads every waiting datagram; the exchange when one answers `probe`.
std::optional<protocol::clock_exchange> take_answer(udp::socket& socket, const protocol::clock_datagram& probe,
                                                    const protocol::clock_source& clock) {
  std::array<std::uint8_t, protocol::clock_datagram_bytes + 1> buffer{};
  std::optional<protocol::clock_exchange> found;
  for (int n = 0; n < 64; ++n) {
    auto got = protocol::receive_stamped(socket.native_handle(), buffer);
    if (!got || !*got) break;
    const protocol::stamped_datagram& d = **got;
    // t4 on the agent's clock: the arrival on CLOCK_MONOTONIC plus the clock's offset.
    const std::int64_t t4 = protocol::received_monotonic_ns(d) + clock.offset_ns;
    auto answer = protocol::decode_clock_datagram(std::span(buffer.data(), std::min(d.bytes, buffer.size())));
    if (!answer || answer->kind != protocol::clock_datagram_kind::answer || answer->cookie != probe.cookie ||
        answer->t1_ns != probe.t1_ns)
      continue;
    found = protocol::clock_exchange{probe.t1_ns, answer->t2_ns, answer->t3_ns, t4};
  }
  return found;
}

}  // namespace

asio::awaitable<void> run_clock_exchanges(asio::any_io_executor executor, std::shared_ptr<protocol::connection> conn,
                                          clock_exchange_plan plan, std::function<void(const std::string&)> log,
                                          std::function<void()> exchanged) {
  udp::socket socket(executor);
  boost::system::error_code ec;
  socket.open(plan.service.protocol(), ec);
  if (!ec) socket.connect(plan.service, ec);
  if (ec) {
    log("clock service " + plan.service.address().to_string() + ":" + std::to_string(plan.service.port()) +
        ": " + ec.message() + "; clock probes through the session only");
    co_return;
  }
  if (auto st = protocol::enable_receive_timestamps(socket.native_handle()); !st.ok()) {
    log(st.message() + "; clock probes through the session only");
    co_return;
  }
  asio::steady_timer pace(executor);
  asio::steady_timer deadline(executor);
  for (std::size_t n = 0; conn->is_open(); ++n) {
    protocol::clock_datagram probe{protocol::clock_datagram_kind::probe, plan.cookie, 0, 0, 0};
    probe.t1_ns = plan.clock.now_ns();
    const auto bytes = protocol::encode(probe);
    // Refused sends (the service's port unreachable, a full buffer) are tried again on
    // the next round; the TLS probes keep the estimate meanwhile.
    if (::send(socket.native_handle(), bytes.data(), bytes.size(), MSG_DONTWAIT) == static_cast<ssize_t>(bytes.size())) {
      deadline.expires_after(plan.answer_timeout);
      deadline.async_wait([&socket](const boost::system::error_code& e) {
        if (!e) socket.cancel();
      });
      std::optional<protocol::clock_exchange> x;
      while (!x && conn->is_open()) {
        auto [wait_ec] = co_await socket.async_wait(udp::socket::wait_read, nothrow);
        if (wait_ec) break;  // the deadline passed (or the socket failed)
        x = take_answer(socket, probe, plan.clock);
      }
      deadline.cancel();
      if (x && conn->send(*x)) exchanged();
    }
    pace.expires_after(n + 1 < plan.burst ? plan.burst_gap : plan.interval);
    co_await pace.async_wait(nothrow);
  }
}

}  // namespace rocelab::agents::agent
