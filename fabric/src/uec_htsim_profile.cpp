#include "rocelab/fabric/uec_htsim_profile.hpp"

#include <cmath>

namespace rocelab::fabric {
namespace {

// main_uec.cpp DEFAULT_TRIMMING_QUEUESIZE_FACTOR and DEFAULT_NONTRIMMING_QUEUESIZE_FACTOR.
constexpr std::uint32_t trimming_queue_bdps = 1;
constexpr std::uint32_t dropping_queue_bdps = 5;
// main_uec.cpp: ECN from 0.2 to 0.8 of a BDP.
constexpr double ecn_low_bdp = 0.2;
constexpr double ecn_high_bdp = 0.8;
// main_uec.cpp: min RTO = 15 us + six queues' drain time ("2 priority queues; 3 hops").
constexpr double rto_floor_us = 15;
constexpr double rto_queue_drains = 6.0;
// uec.cpp initNsccParams: target delay 0.75 network RTT with trimming.
constexpr double trimming_target_rtts = 0.75;

// config.cpp memFromPkt: bytes of `packets` full packets, rounded up.
std::int64_t mem_from_pkt(double packets, std::uint32_t packet_bytes) {
  return static_cast<std::int64_t>(std::ceil(packets * packet_bytes));
}

}  // namespace

uec_htsim_params derive_uec_htsim_params(const uec_htsim_fabric& f) {
  uec_htsim_params p;
  // calculate_rtt, with htsim's types: ps as uint64, the serialization terms in double.
  const double gbps = static_cast<double>(f.host_link_bps) / 1e9;  // config.cpp speedAsGbps
  const double data_ps = static_cast<int>(f.packet_bytes) * 8 / gbps * f.diameter_links * 1000;
  const double ack_ps = static_cast<std::int64_t>(f.ack_bytes) * 8 / gbps * f.diameter_links * 1000;
  const auto rtt_ps = static_cast<std::uint64_t>(
      static_cast<double>(2 * static_cast<std::uint64_t>(f.diameter_latency_ps)) + data_ps + ack_ps);
  p.network_rtt_ps = static_cast<std::int64_t>(rtt_ps);
  // calculate_bdp_pkt (timeAsSec, the link speed in bytes/s by integer division).
  const double rtt_s = static_cast<double>(rtt_ps) / 1e12;
  const auto bytes_per_s = static_cast<std::uint64_t>(f.host_link_bps) / 8;
  p.bdp_packets = static_cast<std::uint32_t>(
      std::ceil(rtt_s * static_cast<double>(bytes_per_s) / static_cast<double>(f.packet_bytes)));
  p.queue_packets = p.bdp_packets * (f.trimming ? trimming_queue_bdps : dropping_queue_bdps);
  p.queue_bytes = mem_from_pkt(p.queue_packets, f.packet_bytes);
  p.ecn_low_bytes = mem_from_pkt(std::ceil(p.bdp_packets * ecn_low_bdp), f.packet_bytes);
  p.ecn_high_bytes = mem_from_pkt(std::ceil(p.bdp_packets * ecn_high_bdp), f.packet_bytes);
  p.trim_threshold_bytes = f.trimming ? p.queue_bytes : 0;
  const double rto_us = rto_floor_us + static_cast<double>(p.queue_bytes) * rto_queue_drains * 8 * 1000000 /
                                           static_cast<double>(static_cast<std::uint64_t>(f.host_link_bps));
  p.min_rto_ps = static_cast<std::int64_t>(static_cast<std::uint64_t>(rto_us * 1000000));  // timeFromUs(double)
  p.target_qdelay_ps = f.trimming ? static_cast<std::int64_t>(static_cast<std::uint64_t>(
                                        static_cast<double>(rtt_ps) * trimming_target_rtts))
                                  : p.network_rtt_ps;
  return p;
}

}  // namespace rocelab::fabric
