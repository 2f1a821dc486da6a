#include "rocelab/fabric/link_flow_control.hpp"

#include <algorithm>

namespace rocelab::fabric {

std::int64_t pfc_pause_state::quanta_ps(std::uint16_t q) const {
  // q x 512 bit times; 1 bit time = 1e12 / rate ps. Exact for 10/25/40/50/100/200/400G.
  // 65535 quanta x 512 bits x 1e12 overflows 64 bits: widen.
  __extension__ using wide = __int128;
  const wide bits = static_cast<wide>(q) * 512;
  return static_cast<std::int64_t>((bits * 1'000'000'000'000 + rate_bps_ - 1) / rate_bps_);
}

void pfc_pause_state::on_frame(std::uint8_t class_enable,
                               const std::array<std::uint16_t, num_priorities>& quanta,
                               std::int64_t now_ns) {
  for (int p = 0; p < num_priorities; ++p) {
    if (((class_enable >> p) & 1u) == 0) continue;
    const std::uint16_t q = quanta[static_cast<std::size_t>(p)];
    auto& until = paused_until_ps_[static_cast<std::size_t>(p)];
    if (q == 0) {
      until = 0;  // 802.1Qbb: a zero timer resumes at once
    } else if (pause_until_resume_) {
      until = never_ns;
    } else {
      // A new frame restarts the timer (802.3 Annex 31B.3.7: pause_time is reloaded).
      until = now_ns * 1000 + quanta_ps(q);
    }
  }
  latest_until_ps_ = 0;
  for (const std::int64_t u : paused_until_ps_) latest_until_ps_ = std::max(latest_until_ps_, u);
}

std::uint8_t pfc_pause_state::allowed_mask_per_priority(std::int64_t now_ns) const {
  const std::int64_t now_ps = now_ns * 1000;
  std::uint8_t mask = 0;
  for (int p = 0; p < num_priorities; ++p) {
    const std::int64_t until = paused_until_ps_[static_cast<std::size_t>(p)];
    if (until != never_ns && now_ps >= until) mask |= static_cast<std::uint8_t>(1u << p);
  }
  return mask;
}

std::int64_t pfc_pause_state::resume_ns(std::uint8_t prio) const {
  const std::int64_t until = paused_until_ps_[prio];
  if (until == never_ns) return never_ns;
  return (until + 999) / 1000;
}

pfc_flow_control::pfc_flow_control(const switch_config& cfg, clock& clk, control_frame_port& out)
    : clock_(clk), out_(out), cfg_(cfg.pfc) {
  const std::size_t n = cfg.ports.size();
  refresh_ns_.resize(n);
  stopped_.assign(n * num_priorities, 0);
  refresh_timer_.assign(n * num_priorities, no_timer);
  counters_.resize(n * num_priorities);
  egress_.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& port = cfg.ports[i];
    egress_.emplace_back(port.rate_bps, cfg.pfc.pause_until_resume);
    std::int64_t refresh = cfg.pfc.refresh_interval_ns;
    if (refresh <= 0) {
      // Half the pause time: a refresh always lands before the peer's timer runs out,
      // even if one refresh frame is delayed behind a full-size data frame.
      refresh = std::max<std::int64_t>(1, egress_[i].quanta_ps(cfg.pfc.pause_quanta) / 2000);
    }
    refresh_ns_[i] = refresh;
  }
}

pfc_flow_control::~pfc_flow_control() {
  for (timer_id id : refresh_timer_)
    if (id != no_timer) clock_.cancel(id);
}

void pfc_flow_control::on_ingress_occupancy(std::uint16_t port, std::uint8_t prio, const pg_occupancy& occ,
                                            std::int64_t now_ns) {
  const std::size_t i = index(port, prio);
  if (stopped_[i] == 0) {
    if (occ.headroom_cells > 0 || occ.shared_cells >= occ.xoff_cells) {
      stopped_[i] = 1;
      ++counters_[i].xoff_sent;
      out_.send_pfc(port, prio, cfg_.pause_quanta, false, now_ns);
      if (!cfg_.pause_until_resume)
        refresh_timer_[i] = clock_.schedule(now_ns + refresh_ns_[port], *this, i);
    }
  } else if (occ.headroom_cells == 0 && (occ.shared_cells == 0 || occ.shared_cells <= occ.xon_cells)) {
    stopped_[i] = 0;
    ++counters_[i].xon_sent;
    if (refresh_timer_[i] != no_timer) {
      clock_.cancel(refresh_timer_[i]);
      refresh_timer_[i] = no_timer;
    }
    if (cfg_.send_xon || cfg_.pause_until_resume) out_.send_pfc(port, prio, 0, false, now_ns);
  }
}

void pfc_flow_control::on_timer(std::int64_t now_ns, std::uint64_t cookie) {
  const auto i = static_cast<std::size_t>(cookie);
  refresh_timer_[i] = no_timer;
  if (stopped_[i] == 0) return;
  const auto port = static_cast<std::uint16_t>(i / num_priorities);
  const auto prio = static_cast<std::uint8_t>(i % num_priorities);
  ++counters_[i].refresh_sent;
  out_.send_pfc(port, prio, cfg_.pause_quanta, true, now_ns);
  refresh_timer_[i] = clock_.schedule(now_ns + refresh_ns_[port], *this, i);
}

void pfc_flow_control::on_pfc_frame(std::uint16_t port, std::uint8_t class_enable,
                                    const std::array<std::uint16_t, num_priorities>& quanta,
                                    std::int64_t now_ns) {
  egress_[port].on_frame(class_enable, quanta, now_ns);
}

}  // namespace rocelab::fabric
