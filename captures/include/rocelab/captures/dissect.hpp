#pragma once
// Dissects one captured frame into the fields congestion analysis needs, in one pass,
// without allocating and without reading past the captured bytes.
//
// Layers: Ethernet II, any number of 802.1Q/802.1ad tags (the outermost and innermost
// are kept), IPv4 (options allowed) or IPv6 (fixed header), UDP, RoCEv2 (UDP destination
// port 4791 and a complete BTH) with RETH and AETH where the opcode carries them, MAC
// control (ethertype 0x8808: 802.3x PAUSE and 802.1Qbb PFC), and switch mirror
// encapsulation: GRE carrying ERSPAN type I, II or III, which is decapsulated so that
// every field below describes the inner (mirrored) frame.
//
// A frame cut by the snap length is dissected as far as it goes and flagged `truncated`;
// a header that is present but invalid (IPv4 IHL < 5, wrong IP version, a length field
// that contradicts itself) stops dissection and flags `malformed`.

#include <array>
#include <cstdint>
#include <span>

#include "rocelab/captures/packet.hpp"

namespace rocelab::captures {

struct dissected_frame {
  bool truncated = false;
  bool malformed = false;
  bool unsupported_link = false;  // link type other than Ethernet and raw IP

  // Mirror encapsulation (outer layers). 0 when the frame was not ERSPAN.
  std::uint8_t erspan_type = 0;       // 1, 2 or 3
  std::uint16_t erspan_session = 0;   // session id (types II and III)
  bool erspan_inner_parsed = false;   // the inner frame was Ethernet and was dissected
  // Type III only (draft-foschiano-erspan-03 section 4.3): the copy's direction (D bit),
  // its timestamp and the timestamp's granularity (0: 100 us, 1: 100 ns, 2: IEEE 1588,
  // 3: user-configured).
  bool erspan_egress = false;
  std::uint32_t erspan_timestamp = 0;
  std::uint8_t erspan_granularity = 0;
  // Offset of the frame the fields describe within the captured bytes: 0 for a frame
  // captured directly, the inner Ethernet frame's offset for ERSPAN. Its wire length is
  // original_length - inner_offset, so mirrored frames count as if captured directly.
  std::uint16_t inner_offset = 0;

  // Ethernet (inner frame when mirrored).
  bool has_ethernet = false;
  std::array<std::uint8_t, 6> dst_mac{};
  std::array<std::uint8_t, 6> src_mac{};
  std::uint16_t ethertype = 0;        // after all VLAN tags
  std::uint8_t vlan_count = 0;
  std::uint16_t vlan_id = 0;          // outermost tag
  std::uint8_t vlan_pcp = 0;
  bool vlan_dei = false;
  std::uint16_t inner_vlan_id = 0;    // innermost tag (same as outer when one tag)
  std::uint8_t inner_vlan_pcp = 0;

  // IP. Addresses are 16 bytes; IPv4 is stored IPv4-mapped (::ffff:a.b.c.d) so flow keys
  // have one shape.
  std::uint8_t ip_version = 0;        // 0 when not IP
  std::uint8_t dscp = 0;
  std::uint8_t ecn = 0;               // 0 not-ECT, 1 ECT(1), 2 ECT(0), 3 CE
  std::uint8_t ip_protocol = 0;       // IPv4 protocol / IPv6 next header
  std::array<std::uint8_t, 16> ip_src{};
  std::array<std::uint8_t, 16> ip_dst{};
  std::uint16_t ip_offset = 0;        // where the (inner) IP header starts in the captured
                                      //   bytes, e.g. for verify_icrc(); valid when ip_version != 0

  // UDP.
  bool has_udp = false;
  std::uint16_t udp_src_port = 0;
  std::uint16_t udp_dst_port = 0;

  // RoCEv2 base transport header (IBTA vol. 1 9.2; annex A17 for RoCEv2).
  bool is_roce = false;               // UDP dst 4791 and all 12 BTH bytes captured
  std::uint8_t bth_opcode = 0;
  bool bth_solicited = false;
  bool bth_migreq = false;
  std::uint8_t bth_pad_count = 0;
  std::uint8_t bth_tver = 0;
  std::uint16_t bth_pkey = 0;
  bool bth_fecn = false;              // RoCEv2 uses the reserved byte's top bits
  bool bth_becn = false;              //   as FECN/BECN (CNPs set BECN)
  std::uint32_t dest_qp = 0;          // 24 bits
  bool ack_req = false;
  std::uint32_t psn = 0;              // 24 bits

  bool has_reth = false;
  std::uint64_t reth_va = 0;
  std::uint32_t reth_rkey = 0;
  std::uint32_t reth_dma_length = 0;

  bool has_aeth = false;
  std::uint8_t aeth_syndrome = 0;     // bits 7..5: 000 ACK, 001 RNR NAK, 011 NAK
  std::uint32_t aeth_msn = 0;         // 24 bits

  // Bytes after the BTH and the extended headers the opcode carries, before pad and ICRC,
  // from the UDP length (so it is right even when the capture was snapped). 0 for an opcode
  // whose headers are unknown. A CNP's 16 reserved bytes count as its payload.
  std::uint32_t roce_payload_length = 0;

  // MAC control (ethertype 0x8808).
  bool is_mac_control = false;
  std::uint16_t mac_control_opcode = 0;   // 0x0001 PAUSE, 0x0101 PFC
  std::uint16_t pause_quanta = 0;         // 802.3x
  std::uint16_t pfc_class_enable = 0;     // 802.1Qbb class-enable vector (all 16 bits)
  std::array<std::uint16_t, 8> pfc_quanta{};
};

// Dissects `bytes` captured on a link of type `link`. `out` is overwritten completely.
void dissect(link_type link, std::span<const std::uint8_t> bytes, dissected_frame& out) noexcept;

// The two kinds of frame that make up almost all of a mirror port's traffic, with only
// the fields congestion analysis reads: a RoCEv2 packet on Ethernet (at most one VLAN
// tag), IPv4 without options, unfragmented, its BTH and the extended headers its opcode
// carries all captured and no length field contradicting another; and an untagged PFC
// frame captured to the minimum frame size.
struct common_frame {
  enum class kind : std::uint8_t { roce, pfc };
  kind what = kind::roce;
  // RoCE: the IP packet runs past the captured bytes, as dissect()'s `truncated`.
  bool truncated = false;
  std::uint8_t ecn = 0;
  std::uint8_t bth_opcode = 0;
  bool has_aeth = false;
  std::uint8_t aeth_syndrome = 0;
  std::uint32_t dest_qp = 0;
  std::uint32_t psn = 0;
  std::array<std::uint8_t, 4> ip_src{};  // IPv4, network order
  std::array<std::uint8_t, 4> ip_dst{};
  // PFC.
  std::array<std::uint8_t, 6> src_mac{};
  std::uint16_t pfc_class_enable = 0;
  std::array<std::uint16_t, 8> pfc_quanta{};
};

// Ethernet frames only. True when `bytes` is one of the two kinds above; `out`'s fields
// of that kind then equal what dissect() finds (with malformed false, no ERSPAN, and
// for PFC truncated false). False for every other frame, which dissect() must take;
// `out` is then unspecified. Fewer checks and stores than dissect(), for the hot path.
[[nodiscard]] bool dissect_common(std::span<const std::uint8_t> bytes, common_frame& out) noexcept;

}  // namespace rocelab::captures
