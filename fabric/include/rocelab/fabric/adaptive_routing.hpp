#pragma once
// Next-hop choice among equal-cost ports: ECMP hashing (a flow stays on one path) or
// adaptive routing (every packet takes the least-loaded port).
//
// ECMP hashes the flow's 5-tuple (RoCEv2) or its DLID/QP entropy (InfiniBand), so two
// large flows that hash alike share a link for their whole life while another link idles.
// Adaptive routing, as InfiniBand switches (NVIDIA Quantum AR) and the Spectrum-X
// Ethernet fabric do it, looks at the candidates' egress queues for every packet and
// picks the emptiest; packets of one flow may then take different paths and arrive out
// of order, so the receiving NIC must place them by PSN rather than demand order (the
// twin's responder does, with adaptive routing on).
//
// Pure: the caller passes the loads; ties rotate so idle ports share the work.
// Threading: single-threaded.

#include <cstdint>
#include <span>
#include <string_view>

#include "rocelab/common/result.hpp"

namespace rocelab::fabric {

enum class routing_mode : std::uint8_t { ecmp, adaptive };
[[nodiscard]] const char* to_string(routing_mode m);
[[nodiscard]] result<routing_mode> parse_routing_mode(std::string_view text);

class adaptive_router {
 public:
  // The index (0..load_bytes.size()-1) of the least-loaded candidate; among equal loads the
  // first at or after a start that advances by one per call. An empty span returns 0.
  [[nodiscard]] std::uint32_t pick(std::span<const std::uint64_t> load_bytes);

 private:
  std::uint32_t next_start_ = 0;
};

}  // namespace rocelab::fabric
