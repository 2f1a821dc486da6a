#pragma once
// The agent's side of the UDP clock exchange (protocol/clock_datagram.hpp): while its
// session is open it probes the controller's clock service, a burst at the start (so the
// first run after registering already has a tight estimate) and then one per interval,
// and forwards every answered exchange to the controller on the session as a
// clock_exchange. t1 is read just before the send and t4 is the kernel's receive stamp, so
// the exchange's round trip leaves out how long this process took to get to the answer.
// An answer that does not match the outstanding probe (cookie, t1) is ignored; a probe
// unanswered within its timeout is given up (the next one goes out on schedule).
//
// Threading: runs on the session's executor.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/udp.hpp>

#include "rocelab/protocol/connection.hpp"
#include "rocelab/protocol/timebase.hpp"

namespace rocelab::agents::agent {

struct clock_exchange_plan {
  boost::asio::ip::udp::endpoint service;  // the controller's address, welcome.clock_port
  std::uint64_t cookie = 0;                // welcome.clock_cookie
  protocol::clock_source clock;            // the agent's (t1, t4)
  std::chrono::milliseconds interval{250};  // after the burst
  // Kernel-stamped exchanges rarely need many to find a tight one; a small burst keeps a
  // thousand agents registering at once from flooding the controller's io thread.
  std::size_t burst = 4;
  std::chrono::milliseconds burst_gap{20};
  std::chrono::milliseconds answer_timeout{200};
};

// Ends when `conn` closes. `log` gets one line when the service cannot be used at all;
// `exchanged` is called once per exchange forwarded.
boost::asio::awaitable<void> run_clock_exchanges(boost::asio::any_io_executor executor,
                                                 std::shared_ptr<protocol::connection> conn, clock_exchange_plan plan,
                                                 std::function<void(const std::string&)> log,
                                                 std::function<void()> exchanged);

}  // namespace rocelab::agents::agent
