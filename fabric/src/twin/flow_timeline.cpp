// The twin engine's per-flow transmit timelines (twin_config::flow_timeline_interval_ns):
// each flow's payload bytes as its last switch sends them toward the receiver, where the
// lab's mirror copies them (the soft switch's egress), sampled as cumulative counters.

#include "engine.hpp"

namespace rocelab::fabric::twin::engine_impl {

namespace {
constexpr std::uint8_t timeline_unsampled = 0, timeline_open = 1, timeline_closed = 2;
}  // namespace

void engine::count_flow_egress(const packet& p) {
  if (type_of(p.cookie) != pkt_type::data || p.flow_id >= flows_.size()) return;
  if (flow_egress_bytes_.size() < flows_.size()) {
    flow_egress_bytes_.resize(flows_.size(), 0);
    flow_timeline_state_.resize(flows_.size(), timeline_unsampled);
  }
  flow_egress_bytes_[p.flow_id] += payload_of(flows_[p.flow_id], psn_of(p.cookie));
}

void engine::sample_flow_bytes() {
  for (std::uint32_t f = 0; f < flow_egress_bytes_.size(); ++f) {
    const std::uint64_t bytes = flow_egress_bytes_[f];
    if (bytes == 0 || flow_timeline_state_[f] == timeline_closed) continue;
    const std::uint32_t device = routes_->host_device(flows_[f].src);
    if (flow_timeline_state_[f] == timeline_unsampled) {
      // The previous sample saw none of its bytes: the timeline starts from 0 there.
      const std::int64_t before = std::max<std::int64_t>(0, now_ - cfg_.flow_timeline_interval_ns);
      if (before < now_) out_.counters.push_back(counter_sample{device, f, "flow_tx_bytes", before, 0});
      flow_timeline_state_[f] = timeline_open;
    }
    out_.counters.push_back(counter_sample{device, f, "flow_tx_bytes", now_, bytes});
    if (out_.flows[f].completed()) flow_timeline_state_[f] = timeline_closed;
  }
}

}  // namespace rocelab::fabric::twin::engine_impl
