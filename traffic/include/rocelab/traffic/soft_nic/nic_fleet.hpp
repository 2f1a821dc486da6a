#pragma once
// The run orchestrator's side of the soft NICs: one `rocelab nic-run` process per host
// namespace, connected as a full mesh of RC QPs (one QP per ordered host pair, set up out
// of band through the processes' configs), and a fabric::twin::twin_context over them so
// the twin's workloads (traffic::make_incast, make_allreduce, ...) run unchanged on real
// frames: post() hands a message to the sender's NIC, completions come back from the NICs
// and go to the workload's on_message_complete.
//
// QPNs: on host s, the QP that sends to host d is 0x100 + d; on host d the QP that
// receives from s is 0x200 + s. A message of the workload is one RDMA WRITE on its pair's
// QP, queued behind earlier messages of the same pair (like a collective library's one
// connection per peer); flow_record::qp is the sender's QPN.
//
// Times: CLOCK_MONOTONIC in every process; records are relative to the run's T0
// (fleet_result::t0_ns). Armed start: run() takes the workload's opening schedule, sends
// it to the NICs ahead of T0 and each NIC holds its posts until T0 + their start
// (nic_process.hpp `at_ns`), so the senders start together on their own clocks, not one
// command after another. run_records::start_offsets_ns says how late each sender started
// against its schedule: the instant its NIC handed the first data packet of its earliest
// message to its port (`first_tx_ns`), minus T0 and the message's scheduled start. That is
// the sender's start on its own wire; a capture behind the switch sees the same packets
// later, after the switch's queues (capture_starts.hpp).
//
// Carriers (nic_links.hpp): by default the fleet spawns one `rocelab nic-run` child per
// host namespace; fleet_options::links hands the same lines to the lab's agents instead.
//
// A NIC lost mid-run (its process exited, its agent died) does not end the run: its
// host is listed in fleet_result::lost_hosts, the messages to and from it stay
// unfinished (end_ns -1), and the others run to completion. The run ends when every
// message between live hosts is acknowledged.
//
// Threading: one thread. Ownership: the fleet owns its carrier; the destructor stops the
// NICs (stop command, then SIGKILL after 2 s) and reaps them.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rocelab/common/records.hpp"
#include "rocelab/common/result.hpp"
#include "rocelab/fabric/twin/twin.hpp"
#include "rocelab/traffic/soft_nic/nic_links.hpp"
#include "rocelab/traffic/soft_nic/nic_process.hpp"
#include "rocelab/traffic/soft_nic/rc_nic.hpp"

namespace rocelab::traffic::soft_nic {

struct fleet_host {
  std::string name;    // "h1"
  std::string netns;   // the process runs here
  std::string ifname = "eth0";
  endpoint address;
};

// Starts the NICs of `hosts` with one config each (fleet_configs) on some carrier; the
// config line is the carrier's to send first.
using nic_links_factory = std::function<result<std::unique_ptr<nic_links>>(
    const std::vector<fleet_host>& hosts, const std::vector<nic_process_config>& configs)>;

// SCHED_FIFO priority of the thread that relays a virtual lab run's posts and completions
// between the fleet and the NIC processes on this machine: `rocelab run`'s in-process
// agents' thread, and a virtual lab host's `rocelab agent --netns`. Above the NICs'
// (fleet_options::rt_priority, 40) and below the soft switch's (50). The NICs and the switch
// are busy for the whole of an incast, when a normal thread gets only the kernel's
// RT-throttling remainder of their CPUs; the next round of a closed-loop workload, armed
// 2 ms ahead, then reached its eight senders 9 to 186 ms late, one after another, and never
// congested the port. The thread blocks on its sockets and pipes between messages.
inline constexpr int lab_relay_rt_priority = 45;

struct fleet_options {
  std::string rocelab_binary;  // runs `<binary> nic-run`
  nic_config nic;              // every host's NIC; `local` is filled per host
  std::string log_dir;         // each process's stderr goes to <log_dir>/nic-<host>.log; empty: /dev/null
  std::chrono::milliseconds ready_timeout{10000};
  // SCHED_FIFO priority of every NIC process (nic_process_config::rt_priority); 0: none.
  // Below the soft switch's (50), so the switch, whose reaction time the headroom is
  // sized for, always runs first.
  int rt_priority = 40;
  // SCHED_FIFO priority of every NIC around an armed instant (nic_process_config::
  // start_rt_priority): above the soft switch's, so every sender's first frame is out
  // before the switch forwards the first of them. 0: none.
  int start_rt_priority = 60;
  // The CPUs the NICs hold around an armed instant (nic_process_config::start_cpu), host
  // i on start_cpus[i % size], so an instant's senders share the CPUs evenly. Empty: with
  // the default carrier (NICs as child processes here) the CPUs this process may run on;
  // with another carrier none (its NICs run on other hosts' CPUs).
  std::vector<int> start_cpus;
  // The carrier; empty: child processes (start_nic_processes).
  nic_links_factory links;
  // Each flow's ideal FCT from src to dst for `bytes`: the fabric's, from the spec the run
  // is of (fabric::twin::flow_ideal), exactly what the twin records for the same flow.
  // Empty: 0, not known (no slowdown).
  std::function<std::int64_t(std::uint32_t src, std::uint32_t dst, std::uint64_t bytes)> ideal_fct_ns;
};

// What the receivers saw of one message (its flow is completed on the sender's last ACK).
struct delivery {
  std::uint32_t src = 0, dst = 0;
  std::uint64_t bytes = 0;
  std::uint64_t ce_marked = 0;
  std::int64_t end_ns = 0;
};

// What a sender's NIC reported of one message's packets on its wire (nic_process.hpp
// "sent"), on the run's timeline; reported false for a message not acknowledged or a NIC
// that does not report them (a hardware NIC's job).
struct message_wire {
  bool reported = false;
  std::int64_t first_tx_ns = 0, last_tx_ns = 0;     // its first and last data packets handed to the port
  std::int64_t wire_bytes = 0, last_wire_bytes = 0;  // of its packets' first transmissions; of the last
};

struct fleet_result {
  run_records records;                 // flows in post order (message id order)
  std::vector<delivery> deliveries;    // in arrival order per receiver
  std::vector<message_wire> wire;      // per message, as records.flows
  std::vector<nlohmann::json> nic_counters;  // per host, the process's final counters
  bool completed = false;              // every message posted was acknowledged
  bool cancelled = false;              // cancel_requested stopped it (records so far)
  std::vector<std::string> lost_hosts; // "h3: agent h3 lost: ..." for each NIC lost mid-run
  std::int64_t t0_ns = 0;              // the run's T0 on CLOCK_MONOTONIC (records are relative to it)
  // Per sender (host name), the scheduled start of the message records.start_offsets_ns
  // measured, on the run's timeline: what other witnesses of the start are set against.
  std::map<std::string, std::int64_t> first_scheduled_ns;
};

class nic_fleet {
 public:
  [[nodiscard]] static result<std::unique_ptr<nic_fleet>> start(const std::vector<fleet_host>& hosts,
                                                                const fleet_options& options);
  ~nic_fleet();
  nic_fleet(const nic_fleet&) = delete;
  nic_fleet& operator=(const nic_fleet&) = delete;

  // Runs the workload until every message it posted completed (and it posts no more) or
  // `timeout` passes; then stops the processes and collects their counters. A timeout is
  // not an error: the result says completed = false and unfinished flows have end_ns -1.
  // `cancel_requested` is polled at least every 20 ms; true stops the run the same way
  // (cancelled = true), so Ctrl-C does not wait for the workload to end. `progress` is
  // told as often (messages acknowledged, messages posted so far).
  [[nodiscard]] result<fleet_result> run(
      fabric::twin::workload& load, std::chrono::milliseconds timeout,
      const std::function<bool()>& cancel_requested = {},
      const std::function<void(std::uint64_t, std::uint64_t)>& progress = {});

  class impl;

 private:
  explicit nic_fleet(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

// Each host's nic_process_config: its address, the NIC settings and one QP per peer in
// each direction (the QPN conventions below).
[[nodiscard]] std::vector<nic_process_config> fleet_configs(const std::vector<fleet_host>& hosts,
                                                            const fleet_options& options);

// The CPUs the calling process may run on (sched_getaffinity), in order; empty when that
// cannot be read.
[[nodiscard]] std::vector<int> this_process_cpus();

// The default carrier: one `<rocelab_binary> nic-run` per host, in its namespace, with its
// stderr in <log_dir>/nic-<host>.log; each gets its config line at once.
[[nodiscard]] result<std::unique_ptr<nic_links>> start_nic_processes(const std::vector<fleet_host>& hosts,
                                                                     const std::vector<nic_process_config>& configs,
                                                                     const fleet_options& options);

// The QPN conventions above.
[[nodiscard]] constexpr std::uint32_t send_qpn(std::uint32_t dst) noexcept { return 0x100 + dst; }
[[nodiscard]] constexpr std::uint32_t receive_qpn(std::uint32_t src) noexcept { return 0x200 + src; }

}  // namespace rocelab::traffic::soft_nic
