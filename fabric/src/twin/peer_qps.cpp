// The twin engine's QPs when a host keeps one RC QP per peer (nic_config::one_qp_per_peer),
// as the labs' NICs do: a QP hands its messages to the wire in post order, one PSN
// sequence after another. A message is posted on its QP at its start instant (a workload
// may call post() earlier with a later start; the labs post at the start). Posted while
// the one before it on the QP still has packets to send, it waits; when that one's last
// packet first leaves, the next starts at once (no second send processing: the NIC
// already holds the work request), paced from the QP's last frame, under the QP's
// reaction point. Go-back-N stays per message.

#include "engine.hpp"

namespace rocelab::fabric::twin::engine_impl {

std::uint32_t engine::peer_attach(std::uint32_t f, const message& m) {
  flow_state& fl = flows_[f];
  const std::uint64_t key = (static_cast<std::uint64_t>(m.src) << 40) | (static_cast<std::uint64_t>(m.dst) << 8) | fl.prio;
  auto [it, fresh] = peer_index_.try_emplace(key, static_cast<std::uint32_t>(peers_.size()));
  if (fresh) {
    peers_.emplace_back(dcqcn_);
    peers_.back().qp = f + 1;  // the QP is named by its first message, as the twin names a QP
  }
  fl.peer = it->second;
  return peers_[fl.peer].qp;
}

void engine::peer_join(std::uint32_t f) {
  flow_state& fl = flows_[f];
  fl.on_qp = true;
  peer_qp& q = peers_[fl.peer];
  if (q.feeding != peer_qp::no_flow) {
    q.waiting.push_back(f);
    return;
  }
  q.feeding = f;
  // Alone on its QP: the NIC takes it up after its send processing (lab_timing.cpp).
  start_at(f, lab_ ? lab_start_ns(fl.src, now_) : now_);
}

void engine::peer_fed(std::uint32_t f) {
  const flow_state& fl = flows_[f];
  peer_qp& q = peers_[fl.peer];
  if (q.feeding != f) return;
  if (q.waiting.empty()) {
    q.feeding = peer_qp::no_flow;
    return;
  }
  const std::uint32_t next = q.waiting.front();
  q.waiting.pop_front();
  q.feeding = next;
  flow_state& nx = flows_[next];
  // The QP's rate limiter spaces the next message's first frame from this one's last.
  nx.last_tx_ps = fl.last_tx_ps;
  nx.last_bits = fl.last_bits;
  start_flow(next);
}

}  // namespace rocelab::fabric::twin::engine_impl
