#pragma once
// The soft NIC as a process (`rocelab nic-run`, one per host namespace): rc_nic on an
// AF_PACKET port (fabric/soft_switch's packet_port: TPACKET_V2 ring + sendto) driven by a
// single-threaded event loop on the realtime_clock (CLOCK_MONOTONIC, the lab's one
// timeline; src/soft_nic/nic_loop.hpp), talking to the run orchestrator in JSON lines.
//
// Protocol (newline-delimited JSON, version 1): the config line, then the typed channel
// of nic_channel.hpp (its messages, their fields and codec are declared there, once, for
// the NIC and the fleet alike). What each message means to the NIC:
//   in, first line:  the nic_process_config (to_json below): interface, NIC config, QPs.
//   in, then:        {"op":"post","qpn":Q,"verb":"write"|"send","bytes":B,"ref":R[,"at_ns":T]}
//                    with at_ns, the NIC holds the post until CLOCK_MONOTONIC T (armed
//                    start: every sender gets its schedule before T0 and starts on its
//                    own clock, so no command, process wake-up or allocation lies
//                    between T0 and the first frame); posts held for the same instant
//                    are released in the order they arrived. armed_boost_ns before T0
//                    a post on an idle QP goes into the NIC armed, its first frame
//                    built (rc_nic::post_armed); at T0 the NIC hands that one frame to
//                    its port before anything else and yields the CPU to the senders
//                    still waiting for it
//                    {"op":"stop"}            (EOF on the input does the same)
//   out:             {"ev":"ready","t_ns":T}  once the port is open and the QPs connected
//                    {"ev":"sent","ref":R,"qpn":Q,"peer":P,"bytes":B,"start_ns":S,"first_tx_ns":F,
//                     "last_tx_ns":L,"wire_bytes":W,"last_wire_bytes":LW,
//                     "end_ns":E,"retransmits":N,"cnps":C}  a message's last ACK arrived; S when
//                     it was posted (released), F when its first data packet was handed to
//                     the port (the sender's start on its own wire), L the same for its
//                     last; W the wire bytes of its packets' first transmissions, LW of the
//                     last one (send_completion)
//                    {"ev":"recv","qpn":Q,"peer":P,"msn":M,"bytes":B,"ce":C,"end_ns":E}
//                    {"ev":"counters",...nic_counters...}  last, before exiting; with
//                     "rx_processing": the receive processing of the messages it received
//                     (last data frame in, by the kernel's stamp at the port's ring, to its
//                     ACK handed to the port), a latency histogram (latency_histogram_json.hpp),
//                     and "cpu_ns": the process's CPU time, user and system, since "ready"
//                    {"ev":"error","error":"..."}         a failed post, or a command line
//                     the channel cannot read (the error names the line and what is wrong)
// Times are CLOCK_MONOTONIC nanoseconds (the same in every namespace of the machine).
//
// Connection setup is out of band, as perftest does it: the orchestrator assigns QPNs and
// initial PSNs and gives both ends the peer's MAC, IP and QPN in their configs.
//
// Threading: the calling thread runs the loop. Needs CAP_NET_RAW in the host namespace.

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rocelab/common/result.hpp"
#include "rocelab/traffic/soft_nic/rc_nic.hpp"

namespace rocelab::traffic::soft_nic {

inline constexpr int nic_protocol_version = 1;

struct nic_process_config {
  std::string ifname = "eth0";
  nic_config nic;
  std::vector<qp_connection> qps;
  std::int64_t deadline_ns = 0;  // CLOCK_MONOTONIC; 0: none (the orchestrator stops it)
  // SCHED_FIFO priority of the NIC's loop; 0: the default policy. A hardware NIC's pacing,
  // its reaction to PFC and its DCQCN timers run in silicon, beside the host's load; a
  // soft NIC under SCHED_OTHER on a loaded machine sends, pauses and cuts its rate tens
  // of milliseconds late, which no lab setting can make up for. The loop sleeps whenever
  // nothing is due, so it holds a CPU only while it has frames to send. Refused (no
  // CAP_SYS_NICE): the NIC runs anyway and notes it on stderr.
  int rt_priority = 0;
  // SCHED_FIFO priority held from just before an armed instant (armed_boost_ns) until the
  // posts it releases have put their first frames on the wire, then back to rt_priority;
  // 0: none. Above the soft switch's (50): on a 2-core lab every sender's first frame
  // wakes the switch, and a switch that preempts the senders still waiting for a CPU
  // staggers their starts by its forwarding work (~100 us per frame measured), so each
  // sender hands its first frame to the kernel before the switch forwards any. Bounded:
  // at most one frame per QP (port pacing) and a release per armed instant.
  int start_rt_priority = 0;
  // The CPU the NIC holds itself to while at start_rt_priority; -1: wherever the kernel
  // puts it. The fleet spreads its NICs over the machine's CPUs (fleet_options::
  // start_cpus): the kernel's balancer of SCHED_FIFO tasks was seen to leave 6 of 8
  // senders on one CPU of 2, so the last of them started ~100 us after the first.
  int start_cpu = -1;
};

// How long before an armed instant the NIC takes start_rt_priority and queues the
// instant's posts armed (first frame built), and for how long before it, at that
// priority, it yields the CPU in a loop instead of sleeping.
inline constexpr std::int64_t armed_boost_ns = 1'000'000;
inline constexpr std::int64_t armed_spin_ns = 300'000;

[[nodiscard]] nlohmann::json to_json(const nic_process_config& c);
[[nodiscard]] result<nic_process_config> nic_process_config_from_json(const nlohmann::json& j);
[[nodiscard]] nlohmann::json to_json(const nic_counters& c);

// Reads the config line from in_fd, opens the port and runs until stop, EOF, `stop` set or
// the deadline. Errors: the config, the port (no such interface, not root).
[[nodiscard]] status run_nic_process(int in_fd, int out_fd, const std::atomic<bool>& stop);

// "02:52:4c:00:00:01" and "198.18.0.1" parsers shared with the orchestrator.
[[nodiscard]] result<mac_address> parse_mac(const std::string& s);
[[nodiscard]] result<ipv4_address> parse_ipv4(const std::string& s);
[[nodiscard]] std::string format_mac(const mac_address& m);
[[nodiscard]] std::string format_ipv4(const ipv4_address& a);

}  // namespace rocelab::traffic::soft_nic
