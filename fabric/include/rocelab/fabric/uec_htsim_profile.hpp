#pragma once
// The constants UEC's own simulator, htsim_uec (ultraethernet/uet-htsim, the commit in
// tests/data/uec-htsim/COMMIT), derives from a fabric's bandwidth-delay product: switch
// queue sizes, NSCC's ECN marking thresholds, the trim threshold, the minimum
// retransmission timeout and NSCC's network RTT and target delay. The twin applies them
// under fabric.uec.profile htsim (fabric_profile.hpp, uec_profile::htsim), so a plain
// spec configures any topology and link speed the way htsim configures itself.
//
// htsim's arithmetic, reproduced operation for operation (double where htsim computes in
// double, picoseconds where it does, truncation where it converts to an integer):
//   main_uec.cpp calculate_rtt:   rtt = 2 x diameter latency
//                                       + packet x 8 / Gb/s x diameter links x 1000
//                                       + 64-byte ACK x 8 / Gb/s x diameter links x 1000  (ps)
//     (the host link speed on every hop: htsim's own comment calls it "not very accurate")
//   main_uec.cpp calculate_bdp_pkt: bdp = ceil(rtt in s x (link bps / 8) / packet)   (packets)
//   main_uec.cpp, automatic queue sizing: queue = bdp x 1 with trimming
//     (DEFAULT_TRIMMING_QUEUESIZE_FACTOR), x 5 without (DEFAULT_NONTRIMMING_...), in
//     bytes by config.cpp memFromPkt (packets x packet size); every switch queue, both
//     directions, every tier (fat_tree_topology.cpp set_queue_sizes)
//   main_uec.cpp: ECN low = memFromPkt(ceil(bdp x 0.2)), high = memFromPkt(ceil(bdp x 0.8)),
//     on every switch queue, ToR downlinks included (set_ecn_parameters(true, true, ...))
//   compositequeue.cpp: a data packet that would take the queue past its size is trimmed
//     (or dropped with -disable_trim), so the trim threshold is the queue size
//   main_uec.cpp: min RTO = timeFromUs(15 + queue bytes x 6.0 x 8 x 1e6 / link bps)
//     ("2 priority queues; 3 hops for incast")
//   uec.cpp initNsccParams: network RTT = rtt; target delay = rtt x 0.75 with trimming,
//     rtt without
// The diameter is the longest host-to-host path: for htsim's fat trees 2 x tiers links,
// its latency the links' latencies plus the switch latencies between them
// (fat_tree_topology.cpp FatTreeTopologyCfg::initialize).
//
// Pure; no I/O.

#include <cstdint>

namespace rocelab::fabric {

// The fabric as htsim's derivation sees it.
struct uec_htsim_fabric {
  std::int64_t host_link_bps = 400'000'000'000;  // htsim's -linkspeed
  std::uint32_t diameter_links = 4;              // links on the longest host-to-host path
  std::int64_t diameter_latency_ps = 4'000'000;  // one way on it: link and switch latencies
  std::uint32_t packet_bytes = 4160;             // htsim's -mtu: a full packet, 64-byte header included
  std::uint32_t ack_bytes = 64;                  // UecBasePacket::ACKSIZE
  bool trimming = true;                          // false: htsim's -disable_trim
};

struct uec_htsim_params {
  std::int64_t network_rtt_ps = 0;  // htsim's network_max_unloaded_rtt
  std::uint32_t bdp_packets = 0;
  std::uint32_t queue_packets = 0;  // every switch queue
  std::int64_t queue_bytes = 0;
  std::int64_t ecn_low_bytes = 0, ecn_high_bytes = 0;  // marking probability 0 at low, 1 at high
  std::int64_t trim_threshold_bytes = 0;               // the queue size; 0 without trimming
  std::int64_t min_rto_ps = 0;
  std::int64_t target_qdelay_ps = 0;                   // NSCC's target queueing delay
};

// htsim_uec's derived constants for `fabric`. Expects a fabric with a positive link
// speed, at least one link and a packet larger than its ACK.
[[nodiscard]] uec_htsim_params derive_uec_htsim_params(const uec_htsim_fabric& fabric);

}  // namespace rocelab::fabric
