#include "rocelab/fabric/soft_switch/mirror.hpp"

#include <cstring>

#include "rocelab/captures/congestion_analyzer.hpp"
#include "rocelab/captures/frame_builder.hpp"

namespace rocelab::fabric::soft_switch {

std::size_t build_mirror_copy(const mirror_settings& m, const mirror_context& ctx, std::span<const std::uint8_t> frame,
                              std::span<std::uint8_t> out, bool& truncated) noexcept {
  namespace cap = captures;
  std::span<const std::uint8_t> inner = frame;
  truncated = m.truncate_bytes != 0 && inner.size() > m.truncate_bytes;
  if (truncated) inner = inner.first(m.truncate_bytes);
  if (m.erspan_type == 0) {
    if (inner.size() > out.size()) return 0;
    std::memcpy(out.data(), inner.data(), inner.size());
    return inner.size();
  }
  cap::erspan_spec s;
  s.type = m.erspan_type;
  s.outer_eth.src_mac = m.src_mac;
  s.outer_eth.dst_mac = m.dst_mac;
  s.outer_ip.src = cap::ipv4_mapped(m.src_ip[0], m.src_ip[1], m.src_ip[2], m.src_ip[3]);
  s.outer_ip.dst = cap::ipv4_mapped(m.dst_ip[0], m.dst_ip[1], m.dst_ip[2], m.dst_ip[3]);
  s.outer_ip.dont_fragment = false;
  s.gre_sequence = ctx.sequence;
  s.session_id = m.session_id;
  s.cos = ctx.tc;
  s.index = ctx.port;  // type II: the port index on this switch
  // Type III: 100 ns timestamp granularity (Gra 01) and the direction in the D bit.
  s.timestamp = static_cast<std::uint32_t>(ctx.now_ns / 100);
  s.granularity = 1;
  s.egress = ctx.egress;
  return cap::build_erspan_frame(s, inner, out);
}

std::size_t build_arrival_copy(const mirror_settings& m, std::uint16_t port, std::uint8_t tc,
                               std::int64_t arrived_realtime_ns, std::uint32_t sequence,
                               std::span<const std::uint8_t> frame, std::span<std::uint8_t> out) noexcept {
  mirror_settings a = m;
  a.erspan_type = 3;
  a.session_id = captures::arrivals_session;
  a.truncate_bytes = arrival_copy_bytes;
  bool truncated = false;
  return build_mirror_copy(a, {port, false, tc, arrived_realtime_ns, sequence}, frame, out, truncated);
}

}  // namespace rocelab::fabric::soft_switch
