#pragma once
// Builds real frames: RoCEv2 packets (with a correct ICRC and IPv4 header checksum),
// CNPs as mlx5 NICs send them, 802.1Qbb PFC and 802.3x PAUSE frames, and ERSPAN
// encapsulations of a mirrored frame. Used by the tests, the benchmark generator, the soft
// RoCE NIC and the soft switch.
//
// Every frame kind has a plain spec struct and two entry points:
//   build_*(spec, ..., std::span<std::uint8_t> out) writes the frame at the start of
//     `out` and returns its length, or 0 (writing nothing useful) when `out` is too small
//     or the spec is invalid. No allocation: the hot path of the soft NIC and switch.
//   append_*(spec, ..., std::vector<std::uint8_t>& out) appends the frame and returns its
//     length, or 0 leaving `out` unchanged when the spec is invalid.
// Frames carry no FCS. Frames shorter than 60 bytes are zero-padded to 60 unless the
// Ethernet spec says otherwise (MAC control frames are always padded).
//
// A spec is invalid when: more than max_vlan_tags tags; an IP version other than 4 or 6;
// IPv4 options longer than 40 bytes or not a multiple of 4; an IP packet over 65535
// bytes; an ERSPAN type other than 1, 2 or 3.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "rocelab/captures/wire/erspan.hpp"
#include "rocelab/captures/wire/ethernet.hpp"
#include "rocelab/captures/wire/ip.hpp"
#include "rocelab/captures/wire/mac_control.hpp"
#include "rocelab/captures/wire/roce.hpp"

namespace rocelab::captures {

inline constexpr std::size_t max_vlan_tags = 4;

struct vlan_spec {
  std::uint16_t tpid = wire::ethertype::vlan;  // 0x88A8 for an 802.1ad S-tag
  std::uint8_t pcp = 0;
  bool dei = false;
  std::uint16_t vid = 0;
};

struct ethernet_spec {
  wire::mac_address dst_mac{};
  wire::mac_address src_mac{};
  std::array<vlan_spec, max_vlan_tags> vlans{};  // outermost first
  std::uint8_t vlan_count = 0;
  bool pad_to_minimum = true;  // zero-pad to 60 bytes, as a NIC does on the wire
};

// IPv4-mapped IPv6 address ::ffff:a.b.c.d, the form dissected_frame reports IPv4 in.
[[nodiscard]] constexpr std::array<std::uint8_t, 16> ipv4_mapped(std::uint8_t a, std::uint8_t b,
                                                                 std::uint8_t c, std::uint8_t d) noexcept {
  return {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, a, b, c, d};
}

struct ip_spec {
  std::uint8_t version = 4;
  // IPv4 takes the last four bytes (write them with ipv4_mapped()).
  std::array<std::uint8_t, 16> src{};
  std::array<std::uint8_t, 16> dst{};
  std::uint8_t dscp = 0;
  wire::ecn_codepoint ecn = wire::ecn_codepoint::not_ect;
  std::uint8_t ttl = 64;  // hop limit for IPv6
  std::uint16_t ipv4_identification = 0;
  bool dont_fragment = true;
  std::uint32_t ipv6_flow_label = 0;
  std::span<const std::uint8_t> ipv4_options{};  // borrowed; copied verbatim after the header
};

// A RoCEv2 packet. The extended transport headers follow the opcode (IBTA 9.2 table 35,
// wire::layout_of): RETH and AETH are written from the fields below when the opcode
// carries them, ImmDt/IETH from `immediate`, DETH from the deth_* fields; other extended
// headers (AtomicETH, AtomicAckETH, RDETH, XRCETH) are zero. Pad bytes and the BTH pad
// count are derived from the payload length.
struct roce_frame_spec {
  ethernet_spec eth;
  ip_spec ip;
  std::uint16_t udp_src_port = 0xC000;  // flow entropy for ECMP
  std::uint16_t udp_dst_port = wire::roce_v2_udp_port;

  std::uint8_t opcode = wire::roce_opcode::rc_send_only;
  bool solicited = false;
  bool migreq = false;
  std::uint8_t tver = 0;
  std::uint16_t pkey = 0xFFFF;
  bool fecn = false;
  bool becn = false;
  std::uint32_t dest_qp = 0;  // 24 bits
  bool ack_req = false;
  std::uint32_t psn = 0;      // 24 bits

  std::uint64_t reth_va = 0;
  std::uint32_t reth_rkey = 0;
  std::uint32_t reth_dma_length = 0;
  std::uint8_t aeth_syndrome = 0;  // see wire::aeth::set for building one from a kind
  std::uint32_t aeth_msn = 0;
  std::uint32_t immediate = 0;
  std::uint32_t deth_qkey = 0;
  std::uint32_t deth_src_qp = 0;

  std::span<const std::uint8_t> payload{};  // borrowed
};

// A CNP (IBTA annex A17.9.2) as mlx5 sends it: opcode 0x81, BECN set, P_Key 0xffff,
// 16 zero bytes after the BTH, UDP source port 0. mlx5's default CNP DSCP is 48
// (the cnp_dscp knob); the real ConnectX-4 Lx CNP in shared/pcaps also carries ECT(0).
struct cnp_frame_spec {
  ethernet_spec eth;
  ip_spec ip{.dscp = 48, .ecn = wire::ecn_codepoint::ect0};
  std::uint16_t udp_src_port = 0;
  std::uint32_t dest_qp = 0;  // the reaction point's QP
  std::uint16_t pkey = 0xFFFF;
  std::uint32_t psn = 0;
};

// 802.1Qbb PFC frame (untagged).
struct pfc_frame_spec {
  wire::mac_address src_mac{};
  wire::mac_address dst_mac = wire::mac_control_multicast;
  std::uint16_t class_enable = 0;  // bit n enables priority n
  std::array<std::uint16_t, wire::pfc_priorities> quanta{};
};

// 802.3x PAUSE frame (untagged). Quanta 0 is XON.
struct pause_frame_spec {
  wire::mac_address src_mac{};
  wire::mac_address dst_mac = wire::mac_control_multicast;
  std::uint16_t quanta = 0xFFFF;
};

// ERSPAN encapsulation of a mirrored Ethernet frame: outer Ethernet, IP (protocol 47),
// GRE, ERSPAN header (draft-foschiano-erspan). Type I: GRE 0x88BE without sequence
// number or ERSPAN header. Type II: GRE 0x88BE with sequence number and the 8-byte
// header. Type III: GRE 0x22EB with sequence number, the 12-byte header and, when
// `platform_subheader` is set, the 8-byte platform subheader (O bit).
struct erspan_spec {
  std::uint8_t type = 2;
  ethernet_spec outer_eth;
  ip_spec outer_ip;
  std::uint32_t gre_sequence = 0;  // types II and III
  std::uint16_t session_id = 0;    // 10 bits
  std::uint16_t vlan = 0;          // original VLAN as the switch saw it
  std::uint8_t cos = 0;
  std::uint32_t index = 0;         // type II port index (20 bits)
  std::uint32_t timestamp = 0;     // type III
  std::uint8_t frame_type = wire::erspan_frame_type::ethernet;  // type III ft
  std::uint8_t hardware_id = 0;    // type III
  bool egress = false;             // type III D bit
  std::uint8_t granularity = 0;    // type III Gra
  bool platform_subheader = false; // type III O bit
  std::uint64_t platform_subheader_value = 0;
};

// Lengths the build functions would produce; 0 for an invalid spec.
[[nodiscard]] std::size_t roce_frame_length(const roce_frame_spec& spec) noexcept;
[[nodiscard]] std::size_t erspan_frame_length(const erspan_spec& spec, std::size_t inner_bytes) noexcept;

[[nodiscard]] std::size_t build_roce_frame(const roce_frame_spec& spec, std::span<std::uint8_t> out) noexcept;
[[nodiscard]] std::size_t build_cnp_frame(const cnp_frame_spec& spec, std::span<std::uint8_t> out) noexcept;
[[nodiscard]] std::size_t build_pfc_frame(const pfc_frame_spec& spec, std::span<std::uint8_t> out) noexcept;
[[nodiscard]] std::size_t build_pause_frame(const pause_frame_spec& spec, std::span<std::uint8_t> out) noexcept;
// `inner` must not overlap `out`.
[[nodiscard]] std::size_t build_erspan_frame(const erspan_spec& spec, std::span<const std::uint8_t> inner,
                                             std::span<std::uint8_t> out) noexcept;

std::size_t append_roce_frame(const roce_frame_spec& spec, std::vector<std::uint8_t>& out);
std::size_t append_cnp_frame(const cnp_frame_spec& spec, std::vector<std::uint8_t>& out);
std::size_t append_pfc_frame(const pfc_frame_spec& spec, std::vector<std::uint8_t>& out);
std::size_t append_pause_frame(const pause_frame_spec& spec, std::vector<std::uint8_t>& out);
std::size_t append_erspan_frame(const erspan_spec& spec, std::span<const std::uint8_t> inner,
                                std::vector<std::uint8_t>& out);

}  // namespace rocelab::captures
