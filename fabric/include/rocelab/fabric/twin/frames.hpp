#pragma once
// Frame sizes the twin puts on its links: every byte a RoCEv2 packet occupies on the
// wire, so link utilisation, queue depths and FCTs carry the real header cost.
//
// Sizes are L2 frames without preamble and inter-frame gap (those 20 bytes are the
// switch's wire_overhead_bytes, added to every frame's serialization time by the switch
// model and by the NIC alike). IPv4 without options, no VLAN tag (PFC priority from
// DSCP, the common RoCE deployment with `trust dscp`).

#include <cstdint>

namespace rocelab::fabric::twin {

inline constexpr std::uint32_t eth_header_bytes = 14;   // 802.3 MAC header
inline constexpr std::uint32_t ipv4_header_bytes = 20;  // RFC 791, no options
inline constexpr std::uint32_t udp_header_bytes = 8;    // RoCEv2: UDP dport 4791
inline constexpr std::uint32_t bth_bytes = 12;          // IBTA 9.2 base transport header
inline constexpr std::uint32_t reth_bytes = 16;         // IBTA 9.3.2: on RDMA WRITE First/Only
inline constexpr std::uint32_t aeth_bytes = 4;          // IBTA 9.3.5: on ACK/NAK
inline constexpr std::uint32_t icrc_bytes = 4;          // IBTA annex A17.3.3 invariant CRC
inline constexpr std::uint32_t fcs_bytes = 4;           // 802.3 frame check sequence
inline constexpr std::uint32_t cnp_reserved_bytes = 16; // IBTA annex A17.9.3: CNP payload
inline constexpr std::uint16_t roce_v2_udp_port = 4791;

// Per-packet overhead of a data packet: Ethernet + IPv4 + UDP + BTH + ICRC + FCS = 62.
inline constexpr std::uint32_t roce_data_overhead_bytes =
    eth_header_bytes + ipv4_header_bytes + udp_header_bytes + bth_bytes + icrc_bytes + fcs_bytes;
// ACK / NAK: the same plus an AETH = 66.
inline constexpr std::uint32_t roce_ack_frame_bytes = roce_data_overhead_bytes + aeth_bytes;
// CNP: the same plus 16 reserved bytes = 78.
inline constexpr std::uint32_t roce_cnp_frame_bytes = roce_data_overhead_bytes + cnp_reserved_bytes;
// The largest data frame for a RoCE MTU: an RDMA WRITE First/Only, which adds a RETH
// (MTU + 78). What PFC headroom must hold per in-flight frame.
[[nodiscard]] constexpr std::int64_t roce_max_frame_bytes(std::uint32_t mtu) noexcept {
  return static_cast<std::int64_t>(mtu) + roce_data_overhead_bytes + reth_bytes;
}

// The HPCC ns-3 simulator: 48 bytes of headers on a data packet (its PppHeader
// serializes 14 bytes, an Ethernet header's size, in that project's fork; IPv4 20, UDP 8,
// SeqTsHeader 6 = seq 4 + pg 2; the INT header is 0 bytes outside HPCC/TIMELY/PINT:
// IntHeader::mode NONE with CC_MODE 1), and ACKs padded to 60 bytes (rdma-hw.cc
// ReceiveUdp: "60-14-20" bytes of payload and qbb header, then IPv4 and the 14-byte
// PPP). Measured on that simulator's own packet trace (mix.tr): 1048-byte data and
// 60-byte ACKs, 83 ns per data frame at 100 Gb/s (8384 bits truncated to whole ns).
// Flows beat their fct.txt ideal FCT, which counts the exact 83.84 ns, by about 1%.
inline constexpr std::uint32_t hpcc_data_overhead_bytes = 48;
inline constexpr std::uint32_t hpcc_ack_frame_bytes = 60;

struct frame_sizes {
  std::uint32_t data_overhead = roce_data_overhead_bytes;  // added to every data payload
  std::uint32_t first_extra = reth_bytes;                  // added to a message's first packet
  std::uint32_t ack = roce_ack_frame_bytes;                // ACK and NAK
  std::uint32_t cnp = roce_cnp_frame_bytes;
};

// InfiniBand: the same transport (BTH, RETH, AETH, ICRC) behind IB's own link
// and network headers instead of Ethernet/IPv4/UDP. IBA vol. 1 ch. 7.7-7.8: LRH 8 bytes
// on every packet, GRH 40 bytes only when it crosses subnets (or carries a GID), VCRC 2
// bytes recomputed per hop; no FCS. A CN (BECN) packet of IB congestion control (annex
// A10.2.2.1) is a BTH-only packet with the BECN bit set.
inline constexpr std::uint32_t ib_lrh_bytes = 8;
inline constexpr std::uint32_t ib_grh_bytes = 40;
inline constexpr std::uint32_t ib_vcrc_bytes = 2;
// The IB MTUs (IBA 7.7.8: 256, 512, 1024, 2048, 4096 payload bytes); 2048 and 4096 are
// the ones deployed.
[[nodiscard]] constexpr bool is_ib_mtu(std::uint32_t mtu) {
  return mtu == 256 || mtu == 512 || mtu == 1024 || mtu == 2048 || mtu == 4096;
}
// Start and end delimiters around every packet on the wire (IBA vol. 2 physical layer:
// one SDP/SLP and one EGP/EBP symbol per packet; 64b/66b lane coding at FDR and above is
// part of the signalling rate, not of the data rate link_gbps is given in). IB has no
// preamble and no minimum inter-packet gap, so this takes the place of Ethernet's 20.
inline constexpr std::uint32_t ib_framing_bytes = 2;

// Data packet: LRH + [GRH] + BTH + ICRC + VCRC = 26 (66 with GRH).
[[nodiscard]] constexpr std::uint32_t ib_data_overhead_bytes(bool grh) {
  return ib_lrh_bytes + (grh ? ib_grh_bytes : 0) + bth_bytes + icrc_bytes + ib_vcrc_bytes;
}

[[nodiscard]] constexpr frame_sizes frame_sizes_for_ib(bool grh) {
  const std::uint32_t base = ib_data_overhead_bytes(grh);
  return {base, reth_bytes, base + aeth_bytes, base};
}

// Ultra Ethernet: a data packet carries Ethernet, IPv4, UDP and the UET transport headers
// (PDS and SES) in 64 bytes, and ACKs, NACKs and credits are 64-byte frames, as UEC's own
// simulator (htsim, UecSrc::_hdr_size and its ACK size) counts them.
inline constexpr std::uint32_t uec_header_bytes = 64;
[[nodiscard]] constexpr frame_sizes uec_frame_sizes() { return {uec_header_bytes, 0, uec_header_bytes, uec_header_bytes}; }

[[nodiscard]] constexpr frame_sizes frame_sizes_for(bool hpcc_ns3_compat) {
  if (hpcc_ns3_compat) return {hpcc_data_overhead_bytes, 0, hpcc_ack_frame_bytes, hpcc_ack_frame_bytes};
  return {};
}

// Packets of a message of `bytes` at `mtu` payload bytes per packet; a zero-length
// WRITE still sends one packet (IBTA 9.4.3: RDMA WRITE Only with no payload).
[[nodiscard]] constexpr std::uint64_t packets_of(std::uint64_t bytes, std::uint32_t mtu) {
  return bytes == 0 ? 1 : (bytes + mtu - 1) / mtu;
}

}  // namespace rocelab::fabric::twin
