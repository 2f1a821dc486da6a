#include "rocelab/fabric/credit_flow_control.hpp"

#include <algorithm>
#include <cassert>
#include <limits>
#include <string>

namespace rocelab::fabric {

void credit_sender::on_update(std::uint8_t vl, std::int64_t fccl_blocks, std::int64_t now_ns) {
  if (fccl_blocks > 0) ever_updated_ |= static_cast<std::uint8_t>(1u << vl);
  if (fccl_blocks <= limit_[vl]) return;
  limit_[vl] = fccl_blocks;
  refresh(vl, now_ns);
}

void credit_sender::on_transmit(std::uint8_t vl, std::uint32_t bytes, std::int64_t now_ns) {
  const std::int64_t blocks = credit_blocks_of(bytes);
  // The arbiter asked allowed() first; a packet beyond the advertised buffer would be a
  // bug in the caller, and the receiver would have to drop it.
  assert(sent_[vl] + blocks <= limit_[vl]);
  sent_[vl] += blocks;
  refresh(vl, now_ns);
}

void credit_sender::refresh(std::uint8_t vl, std::int64_t now_ns) {
  const auto bit = static_cast<std::uint8_t>(1u << vl);
  const bool ok = allowed(vl);
  if (ok) {
    allowed_mask_ |= bit;
    if (stalling_ & bit) {
      stalls_.push_back(credit_stall{vl, stall_start_[vl], now_ns});
      stalled_ns_ += now_ns - stall_start_[vl];
      stalling_ &= static_cast<std::uint8_t>(~bit);
    }
  } else {
    allowed_mask_ &= static_cast<std::uint8_t>(~bit);
    if ((ever_updated_ & bit) && !(stalling_ & bit)) {
      stalling_ |= bit;
      stall_start_[vl] = now_ns;
    }
  }
}

void credit_sender::close_stalls(std::int64_t now_ns) {
  for (std::uint8_t vl = 0; vl < num_priorities; ++vl) {
    const auto bit = static_cast<std::uint8_t>(1u << vl);
    if (!(stalling_ & bit)) continue;
    stalls_.push_back(credit_stall{vl, stall_start_[vl], std::max(now_ns, stall_start_[vl])});
    stalled_ns_ += std::max<std::int64_t>(0, now_ns - stall_start_[vl]);
    stalling_ &= static_cast<std::uint8_t>(~bit);
  }
}

result<std::unique_ptr<credit_flow_control>> credit_flow_control::create(const switch_config& sw, clock& clk,
                                                                         credit_link& out,
                                                                         const credit_config& cfg) {
  auto bad = [](const std::string& what) {
    return status(error_code::invalid_argument, "credit flow control: " + what);
  };
  if (sw.cell_bytes != ib_credit_block_bytes)
    return bad("the switch must count its buffer in 64-byte cells (cell_bytes " + std::to_string(sw.cell_bytes) +
               "), the unit of a credit");
  if (cfg.max_packet_bytes == 0) return bad("max_packet_bytes must be > 0");
  if (cfg.min_update_interval_ns < 0) return bad("min_update_interval_ns must be >= 0");
  for (std::size_t p = 0; p < sw.ports.size(); ++p)
    for (int v = 0; v < num_priorities; ++v) {
      if (((sw.lossless_priorities >> v) & 1u) == 0) continue;
      const pg_config& pg = sw.ports[p].pgs[static_cast<std::size_t>(v)];
      const std::string where = "port " + std::to_string(p) + " VL " + std::to_string(v);
      if (pg.shared.mode != buffer_threshold::kind::fixed)
        return bad(where + ": the VL buffer must be a fixed size (pg shared = fixed)");
      if (pg.reserve_bytes != 0 || pg.headroom_bytes != 0)
        return bad(where + ": a credit-controlled VL has no reserve and no headroom");
      if (pg.shared.fixed_bytes > 0 && pg.shared.fixed_bytes < static_cast<std::int64_t>(cfg.max_packet_bytes))
        return bad(where + ": the VL buffer (" + std::to_string(pg.shared.fixed_bytes) +
                   " B) is smaller than one packet (" + std::to_string(cfg.max_packet_bytes) + " B)");
    }
  return std::unique_ptr<credit_flow_control>(new credit_flow_control(sw, clk, out, cfg));
}

credit_flow_control::credit_flow_control(const switch_config& sw, clock& clk, credit_link& out,
                                         const credit_config& cfg)
    : clock_(clk), out_(out), cfg_(cfg), vl_mask_(sw.lossless_priorities) {
  const std::size_t n = sw.ports.size();
  tx_.assign(n, credit_sender(cfg.max_packet_bytes));
  rx_.reserve(n);
  for (std::size_t p = 0; p < n; ++p) {
    std::array<std::int64_t, num_priorities> cap{};
    for (int v = 0; v < num_priorities; ++v)
      if ((vl_mask_ >> v) & 1u)
        cap[static_cast<std::size_t>(v)] = sw.ports[p].pgs[static_cast<std::size_t>(v)].shared.fixed_bytes /
                                           ib_credit_block_bytes;
    rx_.emplace_back(cap);
  }
  last_update_ns_.assign(n * num_priorities, std::numeric_limits<std::int64_t>::min() / 2);
  last_fccl_.assign(n * num_priorities, 0);
  for (std::size_t p = 0; p < n; ++p)
    for (std::uint8_t v = 0; v < num_priorities; ++v) last_fccl_[index(static_cast<std::uint16_t>(p), v)] = rx_[p].fccl(v);
  update_timer_.assign(n * num_priorities, no_timer);
}

credit_flow_control::~credit_flow_control() {
  for (timer_id id : update_timer_)
    if (id != no_timer) clock_.cancel(id);
}

void credit_flow_control::on_ingress_occupancy(std::uint16_t port, std::uint8_t prio, const pg_occupancy& occ,
                                               std::int64_t now_ns) {
  // 64-byte cells: cells are blocks. Reserve and headroom are zero (create() checks).
  credit_receiver& rx = rx_[port];
  rx.on_occupancy(prio, occ.shared_cells + occ.headroom_cells);
  const std::size_t i = index(port, prio);
  if (rx.fccl(prio) == last_fccl_[i]) return;  // an arrival: nothing to return yet
  if (update_timer_[i] != no_timer) return;    // a coalesced update is already due
  const std::int64_t due = last_update_ns_[i] + cfg_.min_update_interval_ns;
  if (cfg_.min_update_interval_ns == 0 || now_ns >= due) {
    send_update(port, prio, now_ns);
  } else {
    update_timer_[i] = clock_.schedule(due, *this, i);
  }
}

void credit_flow_control::send_update(std::uint16_t port, std::uint8_t vl, std::int64_t now_ns) {
  const std::size_t i = index(port, vl);
  last_update_ns_[i] = now_ns;
  last_fccl_[i] = rx_[port].fccl(vl);
  ++updates_sent_;
  out_.send_credit_update(port, vl, last_fccl_[i], now_ns);
}

void credit_flow_control::on_timer(std::int64_t now_ns, std::uint64_t cookie) {
  const auto i = static_cast<std::size_t>(cookie);
  update_timer_[i] = no_timer;
  const auto port = static_cast<std::uint16_t>(i / num_priorities);
  const auto vl = static_cast<std::uint8_t>(i % num_priorities);
  // Carries every block freed since the last update (the FCCL is absolute).
  if (rx_[port].fccl(vl) != last_fccl_[i]) send_update(port, vl, now_ns);
}

}  // namespace rocelab::fabric
