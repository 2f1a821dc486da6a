#pragma once
// A lab's calibration: what `rocelab calibrate` measured of the hosts, NICs and switch
// the twin stands beside, so that the twin models the lab it is compared with rather
// than ideal hosts and a zero-latency switch.
//
// One file (YAML, versioned) names the lab and when it was taken; the run store keeps a
// copy with the runs it calibrates. Delays are distributions (fabric::delay_quantiles):
//   - base RTT per host pair: a 64 B RC WRITE's post to its ACK, one at a time (as
//     ib_write_lat measures it);
//   - send processing per host: a message's post to its first frame on the wire;
//   - receive processing per host: the last data frame in to its ACK out;
//   - forwarding latency per switch port: the time a frame spends in the switch beyond
//     store and forward (its last bit in to its first bit out, with an empty queue);
//   - achieved line rate per host: one flow alone, bytes on the wire over its duration;
//   - the CNP loop: a CE mark at the switch to the marked flow's CNP back at the switch
//     (the receiver's notification point, from the capture).
// The hosts' delays and rates are taken idle (one message at a time) or, with `load`
// workload, under the spec's own workload: a soft lab's NICs share the CPUs they run on,
// so what they take to answer grows with what the others send, and a calibration taken
// idle does not see it (bench/README.md, "Calibrated under the run's own load").

#include <cstdint>
#include <string>
#include <vector>

#include "rocelab/common/output_file.hpp"
#include "rocelab/common/result.hpp"
#include "rocelab/fabric/delay_quantiles.hpp"

namespace rocelab::experiments {

inline constexpr int calibration_version = 1;
inline constexpr const char* calibration_load_idle = "idle";
inline constexpr const char* calibration_load_workload = "workload";

struct host_calibration {
  std::string name;                       // the spec's host name ("h1")
  fabric::delay_quantiles send_processing;
  fabric::delay_quantiles receive_processing;
  double achieved_gbps = 0;               // 0: not measured
  // How late its pacing wake-ups came against each data packet's due instant
  // (fabric::twin::host_timing::pacing_lateness); samples 0: not measured. Optional in
  // the file (pacing_lateness_ns): one written before it reads as not measured.
  fabric::delay_quantiles pacing_lateness{};
};

struct pair_calibration {
  std::string src, dst;
  fabric::delay_quantiles base_rtt;       // 64 B WRITE, post to ACK
};

struct port_calibration {
  std::uint32_t port = 0;                 // the switch port (host index on one switch)
  fabric::delay_quantiles forwarding;
};

struct calibration {
  int version = calibration_version;
  std::string lab;        // "virtual" (the virtual lab) or the lab's name
  std::string taken_at;   // UTC, ISO 8601 ("2026-11-29T04:00:00Z")
  std::string spec;       // the spec it was taken with (name)
  // How the hosts' delays and rates were taken: calibration_load_idle (the plan, one
  // message at a time) or calibration_load_workload (a run of the spec's own workload,
  // take_delays_under_load). The base RTTs, forwarding and the CNP loop are always idle.
  std::string load = "idle";
  double link_gbps = 0;   // the link speed it was taken at
  std::uint32_t mtu_bytes = 0;
  std::vector<host_calibration> hosts;
  std::vector<pair_calibration> pairs;
  std::vector<port_calibration> ports;
  fabric::delay_quantiles cnp_loop;

  [[nodiscard]] const host_calibration* host(const std::string& name) const;
  // Every port's samples pooled (weighted by count): the hop latency where a port is not named.
  [[nodiscard]] fabric::delay_quantiles forwarding_pooled() const;
};

// YAML text of a calibration, and back. Reading checks the version and every field,
// each error naming `source` and the line.
[[nodiscard]] std::string calibration_yaml(const calibration& c);
[[nodiscard]] result<calibration> parse_calibration(const std::string& text, const std::string& source);
[[nodiscard]] result<calibration> read_calibration_file(const std::string& path);
// Written whole or not at all (common/output_file.hpp); an existing file is refused
// unless `existing` is replace (--force).
[[nodiscard]] status write_calibration_file(const calibration& c, const std::string& path,
                                            existing_output existing = existing_output::refuse);

}  // namespace rocelab::experiments
