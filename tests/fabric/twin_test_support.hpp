#pragma once
// Shared pieces of the twin tests: a workload that posts a fixed list of messages, and
// the configs the physical sanity tests start from.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "rocelab/fabric/twin/twin.hpp"

namespace rocelab::fabric::twin::testing {

class fixed_messages final : public workload {
 public:
  explicit fixed_messages(std::vector<message> m) : messages_(std::move(m)) {}
  void start(twin_context& ctx) override {
    for (const auto& m : messages_) (void)ctx.post(m);
  }

 private:
  std::vector<message> messages_;
};

// n senders h2..h(n+1) (indexes 1..n) to h1 (index 0), `bytes` each, all at t = 0.
inline std::vector<message> incast(std::uint32_t n, std::uint64_t bytes) {
  std::vector<message> out;
  for (std::uint32_t i = 1; i <= n; ++i) {
    message m;
    m.src = i;
    m.dst = 0;
    m.bytes = bytes;
    m.kind = workload_kind::incast;
    m.tag = i;
    out.push_back(m);
  }
  return out;
}

// One switch, `hosts` hosts at 100 Gb/s, 1 us links; a buffer of `buffer_bytes` in 256-byte
// cells; priority 3 lossless unless `pfc` is false; ECN per `ecn`; DCQCN on the NIC per
// `dcqcn`. Shared thresholds: PGs alpha 1/8 (SONiC dynamic_th -3), lossy queues alpha 1;
// the lossless queue has no egress limit of its own (SONiC egress_lossless_profile:
// static_th = the pool), since PFC on ingress is what bounds it.
inline twin_config single_switch(std::uint32_t hosts, std::int64_t buffer_bytes, bool pfc, bool ecn, bool dcqcn) {
  twin_config c;
  c.topology.type = topology_config::kind::single_switch;
  c.topology.hosts = hosts;
  c.topology.link_gbps = 100;
  c.topology.link_delay_ns = 1000;
  c.switch_template.buffer_bytes = buffer_bytes;
  c.switch_template.cell_bytes = 256;
  c.switch_template.lossless_priorities = pfc ? 0b0000'1000 : 0;
  port_config p;
  for (auto& pg : p.pgs) pg.shared = buffer_threshold::dynamic(-3);
  // Headroom for 1 us of cable at 100G: 2 x 12.5 KB in flight + 2 frames + the PFC frame
  // = 27.3 KB, as 1102-byte frames in 256-byte cells (5 cells each) 31.7 KB; 40 KB. Set
  // here because the twin's own default also covers ACK-sized frames in whole cells
  // (4x more), which would not fit the 1 MiB buffers of these tests.
  p.pgs[3].headroom_bytes = 40'000;
  for (auto& q : p.queues) {
    q.shared = pfc && &q == &p.queues[3] ? buffer_threshold::unlimited() : buffer_threshold::dynamic(0);
    // DCQCN paper section 5 / mlx5 deployments at 100G: Kmin 5 KB, Kmax 200 KB, Pmax 1%.
    q.ecn = ecn_config{ecn, 5'000, 200'000, 0.01};
  }
  c.switch_template.ports = {p};
  c.nic.pfc_enabled = pfc;
  c.nic.dcqcn_enabled = dcqcn;
  c.nic.mtu_bytes = 1024;
  return c;
}

inline std::int64_t last_end_ns(const run_records& r) {
  std::int64_t t = 0;
  for (const auto& f : r.flows) t = std::max(t, f.end_ns);
  return t;
}

inline bool all_completed(const run_records& r) {
  return std::all_of(r.flows.begin(), r.flows.end(), [](const flow_record& f) { return f.completed(); });
}

}  // namespace rocelab::fabric::twin::testing
