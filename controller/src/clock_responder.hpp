#pragma once
// The controller's UDP clock service (protocol/clock_datagram.hpp): answers each probe
// whose cookie belongs to a live agent session with the probe's kernel receive time (t2)
// and the time it answers (t3), both on the controller's clock (monotonic_ns). How long
// the io thread took to get to the probe is in t3 - t2, which the agent's round trip
// leaves out, so probes need no thread of their own. Datagrams with unknown cookies or of
// the wrong shape are dropped without an answer (counted).
//
// Bound to the listener's address on the listener's port number when that UDP port is
// free (one port number for firewalls), else on any port; welcome.clock_port says which.
// Listening on 0.0.0.0, an answer leaves from the address the kernel routes it from; an
// agent that reached the controller on another of its addresses drops it (its socket is
// connected) and keeps to its TLS probes, with their wider uncertainty.
// Threading: io thread only.

#include <cstdint>
#include <unordered_set>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>

#include "rocelab/common/result.hpp"

namespace rocelab::controller {

class clock_responder {
 public:
  struct counters {
    std::uint64_t answered = 0;
    std::uint64_t dropped = 0;  // unknown cookie, malformed, or not a probe
  };

  explicit clock_responder(boost::asio::io_context& io) : socket_(io) {}

  // Errors: io_error naming the address (the socket or its timestamp option).
  [[nodiscard]] status open(const boost::asio::ip::address& address, std::uint16_t preferred_port);
  // The serving coroutine; ends when close() is called.
  boost::asio::awaitable<void> serve();
  void close();

  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  // A new cookie, unpredictable (OpenSSL's RAND_bytes), answered until forget().
  [[nodiscard]] std::uint64_t admit();
  void forget(std::uint64_t cookie) { cookies_.erase(cookie); }
  [[nodiscard]] const counters& stats() const noexcept { return counters_; }

 private:
  void answer_waiting();

  boost::asio::ip::udp::socket socket_;
  std::uint16_t port_ = 0;
  std::unordered_set<std::uint64_t> cookies_;
  counters counters_;
};

}  // namespace rocelab::controller
