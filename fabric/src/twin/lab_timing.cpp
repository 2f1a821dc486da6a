// The twin engine's model of a calibrated lab (twin_config::lab): a NIC's send processing
// before a message's first frame, its receive processing before each response and before
// the completion a message's last ACK brings its requester, a switch
// port's forwarding latency per frame, and the rate a NIC achieves below its link's.

#include "engine.hpp"

namespace rocelab::fabric {
namespace twin {

bool lab_timing::empty() const noexcept {
  for (const host_timing& h : hosts)
    if (!h.send_processing.empty() || !h.receive_processing.empty() || h.achieved_gbps > 0 ||
        !h.pacing_lateness.empty())
      return false;
  for (const delay_quantiles& q : forwarding_by_port)
    if (!q.empty()) return false;
  return forwarding.empty();
}

}  // namespace twin

namespace twin::engine_impl {

namespace {
// Stream keys: one family per kind of draw, the host or channel within it.
constexpr std::uint64_t send_stream = 0x5e4d'0000'0000ull;
constexpr std::uint64_t receive_stream = 0x2ec7'0000'0000ull;
constexpr std::uint64_t forward_stream = 0xf0d0'0000'0000ull;
constexpr std::uint64_t pacing_stream = 0x9ace'0000'0000ull;
constexpr std::uint64_t completion_stream = 0xc0a1'0000'0000ull;
}  // namespace

status validate_lab(const twin_config& c) {
  const lab_timing& lab = c.lab;
  auto bad = [](const std::string& what) { return status(error_code::invalid_argument, what); };
  auto check = [&](const delay_quantiles& q, const std::string& field) {
    return q.valid() ? status::success() : bad(field + ": quantiles must be non-negative and non-decreasing");
  };
  if (!lab.hosts.empty() && lab.hosts.size() != c.topology.hosts)
    return bad("lab.hosts: " + std::to_string(lab.hosts.size()) + " entries for " + std::to_string(c.topology.hosts) +
               " hosts (one per host, or none)");
  for (std::size_t h = 0; h < lab.hosts.size(); ++h) {
    const std::string at = "lab.hosts[" + std::to_string(h) + "]";
    ROCELAB_RETURN_IF_ERROR(check(lab.hosts[h].send_processing, at + ".send_processing"));
    ROCELAB_RETURN_IF_ERROR(check(lab.hosts[h].receive_processing, at + ".receive_processing"));
    ROCELAB_RETURN_IF_ERROR(check(lab.hosts[h].pacing_lateness, at + ".pacing_lateness"));
    if (!(lab.hosts[h].achieved_gbps >= 0) || !std::isfinite(lab.hosts[h].achieved_gbps))
      return bad(at + ".achieved_gbps must be >= 0");
  }
  if (!lab.forwarding_by_port.empty() && c.topology.type != topology_config::kind::single_switch)
    return bad("lab.forwarding_by_port: per port on a single switch only (a leaf-spine draws from lab.forwarding)");
  if (lab.forwarding_by_port.size() > c.topology.hosts)
    return bad("lab.forwarding_by_port: " + std::to_string(lab.forwarding_by_port.size()) + " ports on a switch of " +
               std::to_string(c.topology.hosts));
  for (std::size_t p = 0; p < lab.forwarding_by_port.size(); ++p)
    ROCELAB_RETURN_IF_ERROR(check(lab.forwarding_by_port[p], "lab.forwarding_by_port[" + std::to_string(p) + "]"));
  return check(lab.forwarding, "lab.forwarding");
}

void engine::lab_build() {
  const lab_timing& lab = cfg_.lab;
  lab_ = !lab.empty();
  if (!lab_) return;
  const std::uint32_t n = cfg_.topology.hosts;
  if (!lab.hosts.empty()) {
    send_delay_.resize(n);
    receive_delay_.resize(n);
    completion_delay_.resize(n);
    achieved_bps_.assign(n, 0);
    bool any_receive = false;
    for (std::uint32_t h = 0; h < n; ++h) {
      const host_timing& ht = lab.hosts[h];
      send_delay_[h] = delay_stream{&ht.send_processing, mix64(cfg_.seed ^ (send_stream + h)), 0};
      receive_delay_[h] = delay_stream{&ht.receive_processing, mix64(cfg_.seed ^ (receive_stream + h)), 0};
      // The requester's NIC takes a received ACK up as the responder's takes up data: the
      // same wake-up, drawn from its own stream so the responses' draws stay as they were.
      completion_delay_[h] = delay_stream{&ht.receive_processing, mix64(cfg_.seed ^ (completion_stream + h)), 0};
      any_receive = any_receive || receive_delay_[h].active();
      // The NIC's frames hold its link at the link rate; a lower achieved rate only
      // spaces their starts further apart.
      if (ht.achieved_gbps > 0 && rate_of(ht.achieved_gbps) < hosts_[h].rate_bps) achieved_bps_[h] = rate_of(ht.achieved_gbps);
    }
    if (!any_receive) {
      receive_delay_.clear();
      completion_delay_.clear();
    }
    // The pacing model replaces the twin's own DCQCN spacing bookkeeping, so it is kept
    // off where it does not apply: UEC flows pace by their own transport, and the HPCC
    // ns-3 comparison reproduces ns-3's pacing exactly.
    if (!uec_ && !compat_) {
      pacing_.resize(n);
      bool any_pacing = false;
      for (std::uint32_t h = 0; h < n; ++h) {
        pacing_[h].lateness = delay_stream{&lab.hosts[h].pacing_lateness, mix64(cfg_.seed ^ (pacing_stream + h)), 0};
        any_pacing = any_pacing || pacing_[h].lateness.active();
      }
      if (!any_pacing) pacing_.clear();
    }
    if (std::all_of(achieved_bps_.begin(), achieved_bps_.end(), [](std::int64_t r) { return r == 0; })) achieved_bps_.clear();
  }
  bool any_forward = !lab.forwarding.empty();
  for (const delay_quantiles& q : lab.forwarding_by_port) any_forward = any_forward || !q.empty();
  if (!any_forward) return;
  const bool single = cfg_.topology.type == topology_config::kind::single_switch;
  forward_delay_.resize(port_owner_.size());
  for (std::uint32_t ch = 0; ch < port_owner_.size(); ++ch) {
    const std::uint16_t port = port_owner_[ch].second;
    const delay_quantiles* q = &lab.forwarding;
    if (single && port < lab.forwarding_by_port.size() && !lab.forwarding_by_port[port].empty())
      q = &lab.forwarding_by_port[port];
    forward_delay_[ch] = delay_stream{q, mix64(cfg_.seed ^ (forward_stream + ch)), 0};
  }
}

std::int64_t engine::lab_start_ns(std::uint32_t src, std::int64_t start_ns) {
  return send_delay_.empty() ? start_ns : start_ns + send_delay_[src].next();
}

// CNPs take the same path as ACKs: the responder's NIC makes both from the same received
// frame (the CE bit is read as the frame is parsed, as the PSN is), so both wait for its
// receive processing; the calibration's CNP loop measures the same span again end to end.
void engine::lab_respond(std::uint32_t flow, const packet& p) {
  if (responses_.size() <= flow) responses_.resize(flows_.size());
  pending_responses& r = responses_[flow];
  const std::int64_t at = std::max(now_ + receive_delay_[flows_[flow].dst].next(), r.last_release_ns);
  r.last_release_ns = at;
  r.queue.push_back(p);
  q_.push(at, ev_response, flow);
}

void engine::all_acked(std::uint32_t flow) {
  const std::uint32_t src = flows_[flow].src;
  const std::int64_t at =
      completion_delay_.empty() || !completion_delay_[src].active() ? now_ : now_ + completion_delay_[src].next();
  if (at <= now_)
    complete(flow);
  else
    q_.push(at, ev_completion, flow);  // nothing left to send; duplicate ACKs change nothing
}

void engine::on_response(std::uint32_t flow) {
  pending_responses& r = responses_[flow];
  const packet p = r.queue.front();
  r.queue.pop_front();
  const std::uint32_t h = flows_[flow].dst;
  hosts_[h].control.push_back(p);
  nic_kick(h);
}

// The draw is added after the frame left the port (as fabric.switch_latency_ns is, in the
// link's delay), so the port's own scheduling is the switch model's. A frame that drew less
// than the one before it arrives right behind that one: its own serialization later.
void engine::lab_push_forwarded(std::uint32_t ch, std::int64_t at_ns, const packet& p) {
  const std::int64_t at = at_ns + forward_delay_[ch].next();
  push_wire(ch, std::max(at, lab_behind_ns(ch, p.size_bytes)), p);
}

std::int64_t engine::lab_behind_ns(std::uint32_t ch, std::uint32_t frame_bytes) const {
  return channels_[ch].last_at_ns + ceil_div(frame_ps(frame_bytes, channel_rate_bps(ch)), 1000);
}

std::int64_t engine::lab_next_start_ps(std::uint32_t h, std::int64_t start_ps, std::int64_t wire_ps,
                                       std::uint32_t frame_bytes) const {
  const std::int64_t rate = achieved_bps_[h];
  if (rate == 0) return start_ps + wire_ps;
  // On the wire, as calibration measures it: the frame with its preamble and gap.
  const std::int64_t paced_ps =
      ceil_div((static_cast<std::int64_t>(frame_bytes) + overhead_) * 8 * 1'000'000'000'000, rate);
  return start_ps + std::max(wire_ps, paced_ps);
}

}  // namespace twin::engine_impl
}  // namespace rocelab::fabric
