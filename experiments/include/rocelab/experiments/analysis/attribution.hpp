#pragma once
// Attribution of slow flows, rank correlation with slowdown, per-port pause summaries and
// PFC storm detection, on the per-flow correlation of correlation.hpp.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "rocelab/experiments/analysis/correlation.hpp"

namespace rocelab::experiments {

// For a slow flow: its excess FCT over ideal (fct - ideal_fct) split into what the
// records explain, in this order, each capped by what is left of the excess:
//   pause         its pause exposure over the path (queues build behind a pause, so the
//                 pause is charged before the queueing it causes);
//   queueing      the queueing delay at its switch hops (mean depth / port rate);
//   retransmission  retransmitted packets x one packet's serialization at the sender's
//                 rate (a lower bound: go-back-N also waits a round trip or a timeout);
//                 where the NIC did not count them (a hardware NIC), 0 with
//                 retransmission_measured false: that share stays in unexplained;
//   sharing       the time the flow's busier end link (its sender's NIC or its
//                 destination's edge port) spent carrying other flows while it ran: the
//                 other flows' bytes through that host during the flow's lifetime (each
//                 spread evenly over its own lifetime) at the link rate. An 8-to-1 incast
//                 that completes at its fair share is explained here;
//   unexplained   the rest (rate cuts below the fair share, host and software delays).
// The five add up to the excess exactly.
struct flow_attribution {
  std::size_t flow = 0;
  double slowdown = 0;
  std::int64_t fct_ns = 0, ideal_fct_ns = 0, excess_ns = 0;
  std::int64_t pause_ns = 0, queueing_ns = 0, retransmission_ns = 0, sharing_ns = 0, unexplained_ns = 0;
  bool retransmission_measured = true;  // false: the flow's retransmits were not counted
};

struct attribution_options {
  double percentile = 99;     // flows at this slowdown percentile (nearest rank) and above
  std::uint32_t mtu_bytes = 1024;
  double sender_gbps = 100;   // the hosts' link rate: retransmitted packets and shared bytes are serialized at it
  std::uint32_t wire_overhead_bytes = 82;  // Ethernet+IP+UDP+BTH+ICRC+FCS+preamble+IFG per packet
};

// Completed flows at or above the percentile of slowdown, slowest first.
[[nodiscard]] std::vector<flow_attribution> attribute_tail(const run_records& records,
                                                           std::span<const flow_correlation> flows,
                                                           const attribution_options& options = {});

// Spearman's rank correlation (ties get their mean rank; Pearson on the ranks). Empty
// when fewer than 3 pairs or either side is constant.
[[nodiscard]] std::optional<double> spearman(std::span<const double> x, std::span<const double> y);

struct rank_correlation {
  std::string measure;          // "pause_ns", "ce_fraction", "cnps", "retransmits", "queueing_ns"
  std::size_t n = 0;            // flows in the correlation
  std::optional<double> rho;    // against slowdown
};

// Rank correlation of each exposure with slowdown over completed flows (queueing only
// over flows with queueing figures, cnps and retransmits only over flows that counted
// them: n is 0 and rho empty when none did).
[[nodiscard]] std::vector<rank_correlation> slowdown_correlations(std::span<const flow_correlation> flows);

// ---------------------------------------------------------------- ports

// One (device, port, priority) that was paused, with where its intervals came from.
struct port_pause_summary {
  pause_index::key port;
  std::size_t intervals = 0;
  std::int64_t paused_ns = 0;        // union over sources
  std::int64_t longest_ns = 0;       // the longest continuous pause (sources merged)
  std::int64_t by_source_ns[3] = {};  // indexed by pause_source: capture, counter, model
};

[[nodiscard]] std::vector<port_pause_summary> summarize_pauses(std::span<const pause_interval> pauses);

// A PFC storm: a (device, port, priority) paused continuously for longer than the
// threshold, the condition SONiC's PFC watchdog detects (its default detection_time is
// 200 ms). Intervals of any source separated by at most `merge_gap_ns` count as one pause
// (a storm of back-to-back XOFFs refreshed before expiry shows as touching intervals).
struct storm_options {
  std::int64_t threshold_ns = 200'000'000;
  std::int64_t merge_gap_ns = 0;
};

struct pfc_storm {
  pause_index::key port;
  std::int64_t start_ns = 0, end_ns = 0;
  std::vector<pause_source> sources;  // which sources saw it
};

[[nodiscard]] std::vector<pfc_storm> detect_storms(std::span<const pause_interval> pauses,
                                                   const storm_options& options = {});

}  // namespace rocelab::experiments
