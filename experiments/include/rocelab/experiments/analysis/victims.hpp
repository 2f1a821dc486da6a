#pragma once
// Victims of PFC: flows paused at a port they did not congest (head-of-line blocking and
// congestion spreading).
//
// Definition. Take flow F with priority q, lifetime [start, end] (the end of the run when
// it did not complete) and path h_0 (its sender's NIC), h_1 .. h_k (switch egress ports;
// h_k faces F's destination host). F's destination port is *congested* during F when
//   (a) fan-in: another flow of priority q to the same destination host overlapped F in
//       time (with every host link at one speed, a lone flow cannot congest its
//       destination's edge port: only fan-in above one can), and
//   (b) when the run has queue samples: the egress queue (h_k, q) also reached
//       `congested_queue_bytes` at some sample in [start, end] (the step function of
//       queue_index, so a queue already full when F started counts). A lone flow whose
//       packets arrive bunched after an upstream pause lifts can fill that queue for a
//       moment; (a) keeps that from counting as congestion it caused.
// F is a *victim at hop h_i*, i < k, when (h_i, q) was paused for at least
// `min_pause_ns` within F's lifetime while F's destination port was not congested: F's
// packets waited behind a pause that congestion elsewhere sent upstream. A pause at h_k
// itself (the destination host's NIC pushing back) is never victimhood: it is F's own
// destination. Flows whose path is unknown, or that cross no switch, are not judged.
// Limitation: a destination link slower than the sender's can be congested by one flow;
// rocelab's topologies give every host the same link speed.
// A victim flow is one that is a victim at some hop; its victim time is the union of
// its victim hops' pause overlaps.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "rocelab/experiments/analysis/correlation.hpp"

namespace rocelab::experiments {

struct victim_options {
  std::uint64_t congested_queue_bytes = 32 * 1024;
  std::int64_t min_pause_ns = 1;
};

struct victim_flow {
  std::size_t flow = 0;             // run_records::flows index
  std::vector<std::size_t> hops;    // indexes into flow_correlation::hops where F is a victim
  std::int64_t victim_paused_ns = 0;
};

// Per port: how many flows were victims there (congestion spreading shows as victims on
// uplinks and spine ports far from the congested edge port).
struct victim_port {
  pause_index::key port;  // (device, egress port, priority)
  std::size_t victims = 0;
  std::int64_t victim_paused_ns = 0;  // summed over the victims
};

struct victim_analysis {
  std::vector<victim_flow> victims;
  std::vector<victim_port> ports;               // sorted by victims, then paused time
  std::vector<pause_index::key> congested_ports;  // destination ports found congested
  bool from_queue_samples = false;              // whether (b) was applied
};

// Marks hop_exposure::victim in `flows` (from correlate_flows on the same records) and
// returns the victims.
[[nodiscard]] victim_analysis find_victims(const run_records& records, std::vector<flow_correlation>& flows,
                                           const victim_options& options = {});

}  // namespace rocelab::experiments
