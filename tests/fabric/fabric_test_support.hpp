#pragma once
// Shared helpers for the fabric tests: small configs and a PFC frame recorder.
#include <vector>

#include "rocelab/fabric/switch_model.hpp"

namespace rocelab::fabric::testing {

struct frame_recorder final : pfc_frame_sink {
  std::vector<pfc_frame_out> frames;
  void on_pfc_frame_out(const pfc_frame_out& f) override { frames.push_back(f); }
};

// n ports at rate_bps; every PG and queue without reserve and with unlimited shared
// limits, so a test sets only what it pins down.
inline switch_config plain_config(int n, std::int64_t rate_bps = 100'000'000'000) {
  switch_config cfg;
  cfg.lossless_priorities = 0;
  for (int i = 0; i < n; ++i) {
    port_config p;
    p.rate_bps = rate_bps;
    for (auto& pg : p.pgs) pg.shared = buffer_threshold::unlimited();
    for (auto& q : p.queues) q.shared = buffer_threshold::unlimited();
    cfg.ports.push_back(p);
  }
  return cfg;
}

inline packet make_packet(std::uint16_t in, std::uint16_t out, std::uint8_t prio, std::uint32_t size,
                          ecn_codepoint ecn = ecn_codepoint::not_ect) {
  packet p;
  p.ingress_port = in;
  p.egress_port = out;
  p.priority = prio;
  p.size_bytes = size;
  p.ecn = ecn;
  return p;
}

}  // namespace rocelab::fabric::testing
