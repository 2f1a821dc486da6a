#pragma once
// The agent daemon (`rocelab agent`): one per lab host. It connects to the
// controller over TLS-PSK (protocol/security.hpp), says hello with its name, answers
// heartbeats and clock probes (t2/t3 from its clock_source, ahead of every frame queued,
// with its host's clock source when it has one), probes the controller's UDP clock
// service when the welcome names one (clock_exchanges.hpp), and executes typed
// operations only: apply/restore NIC settings (settings_guard.hpp) and jobs
// (start_job: timer, soft, verbs). It never runs a shell command.
//
// Reconnects every reconnect_interval while the controller is unreachable.
// Dead-man switch: when nothing was heard from the controller for `deadman` (the
// controller's welcome may shorten it, never lengthen it), the agent stops its jobs and
// restores every setting it changed, by itself; it keeps trying to reconnect.
//
// Jobs: timer starts at start_at_ns on the agent's clock and reports when it really
// started. soft runs the host's soft RoCEv2 NIC (`rocelab nic-run`) in the host's
// namespace and relays its lines to and from the controller (soft_job.hpp). verbs is
// refused with an error that says so: this build has no verbs transport.
//
// Namespaces: in the virtual lab an agent runs in the machine's namespace, where its
// controller is reachable, and starts its host's NIC in the host's namespace (`netns`),
// like a lab host whose management interface is not its RDMA port.
//
// Threading: everything runs on the executor given to start(); stop() may be called from
// any thread. Many agents can share one io_context (the scale bench runs 1,000).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "rocelab/agents/agent/settings_guard.hpp"
#include "rocelab/agents/agent/start_gate.hpp"
#include "rocelab/agents/clock/host_clock_reader.hpp"
#include "rocelab/common/result.hpp"
#include "rocelab/protocol/connection.hpp"
#include "rocelab/protocol/security.hpp"
#include "rocelab/protocol/timebase.hpp"

namespace rocelab::agents::agent {

namespace asio = boost::asio;

struct agent_options {
  std::string controller;  // host:port
  std::string name;        // the host's name in the lab inventory ("h1")
  std::string token;       // the shared token (read_token_file)
  std::chrono::milliseconds deadman{10000};
  std::chrono::milliseconds reconnect_interval{500};
  std::chrono::milliseconds connect_timeout{5000};
  protocol::clock_source clock;  // timestamps for probes and jobs
  std::string sysfs_root = "/sys";  // mlx5 ports (class/net/IF/ecn, class/infiniband)
  std::string netns;           // soft jobs' NICs run in this namespace (/run/netns/<netns>); empty: ours
  std::string rocelab_binary;  // runs `nic-run` for soft jobs; empty: /proc/self/exe
  std::string log_dir;         // soft NICs' stderr; empty: discarded
  bool log = true;  // one line per connection event on stderr
  // Where armed jobs wait for their instant (start_gate.hpp); agents of one process may
  // share one. Empty: the agent makes its own.
  std::shared_ptr<start_gate> gate;
  // This host's clock source (agents/clock/host_clock_reader.hpp), reported with every
  // clock probe answered, so a controller can use synchronised host clocks instead of its
  // own estimate. Agents of one process may share one. Empty: the agent reads this host's
  // (host_clock_monitor::of_this_host()).
  std::shared_ptr<const clock::host_clock_monitor> host_clock;
};

struct agent_stats {
  std::uint64_t connects = 0;
  std::uint64_t connect_failures = 0;  // connections or handshakes that failed (then retried)
  std::uint64_t probes_answered = 0;
  std::uint64_t clock_exchanges = 0;  // UDP exchanges with the clock service, forwarded
  std::uint64_t jobs_started = 0;
  std::uint64_t jobs_reported = 0;
  std::uint64_t deadman_restores = 0;  // times the dead-man switch fired
  std::uint64_t settings_restored = 0; // settings put back by it
  bool connected = false;
  std::string last_error;
};

class agent : public std::enable_shared_from_this<agent> {
 public:
  [[nodiscard]] static result<std::shared_ptr<agent>> make(agent_options options);
  ~agent();

  // Starts the connect/session loop and the dead-man watchdog on `executor`.
  void start(asio::any_io_executor executor);
  // Ends the loops (posted to the executor); jobs are stopped, settings are left as they
  // are (a controlled stop is the controller's to restore).
  void stop();

  [[nodiscard]] agent_stats stats() const;
  [[nodiscard]] const std::string& name() const noexcept { return options_.name; }

  class job;

 private:
  explicit agent(agent_options options, std::unique_ptr<protocol::tls_context> tls);
  asio::awaitable<void> run_loop();
  asio::awaitable<void> session(std::shared_ptr<protocol::connection> conn);
  asio::awaitable<void> heartbeats(std::shared_ptr<protocol::connection> conn, std::chrono::milliseconds interval);
  asio::awaitable<void> watchdog();
  void handle(const std::shared_ptr<protocol::connection>& conn, const protocol::message& m);
  void start_job(const std::shared_ptr<protocol::connection>& conn, const protocol::start_job& j);
  void deadman_fire();
  void log(const std::string& line) const;

  agent_options options_;
  std::unique_ptr<protocol::tls_context> tls_;
  settings_guard settings_;
  asio::any_io_executor executor_;
  std::shared_ptr<protocol::connection> current_;
  std::map<std::uint64_t, std::shared_ptr<job>> jobs_;
  std::int64_t last_heard_ns_ = 0;
  std::chrono::milliseconds deadman_;
  bool stopping_ = false;
  mutable std::mutex stats_mutex_;
  agent_stats stats_;
};

}  // namespace rocelab::agents::agent
