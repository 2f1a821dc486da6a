#pragma once
// RoCEv2 transport headers: InfiniBand BTH and the extended transport headers rocelab
// reads, carried in UDP to port 4791 (IBTA vol. 1 annex A17, "RoCEv2").
//
// Clause references are to IBTA vol. 1 release 1.4 chapter 9 unless marked A17.

#include <array>
#include <cstddef>
#include <cstdint>

#include "rocelab/captures/wire/byte_order.hpp"

namespace rocelab::captures::wire {

// A17.2.2: the well-known UDP destination port. The source port carries flow entropy
// (ECMP) and says nothing about the protocol.
inline constexpr std::uint16_t roce_v2_udp_port = 4791;

// 9.2 table 35 (OpCode field): the top three bits name the transport service, the low
// five the operation.
namespace roce_opcode {
inline constexpr std::uint8_t rc_send_first = 0x00;
inline constexpr std::uint8_t rc_send_middle = 0x01;
inline constexpr std::uint8_t rc_send_last = 0x02;
inline constexpr std::uint8_t rc_send_last_with_immediate = 0x03;
inline constexpr std::uint8_t rc_send_only = 0x04;
inline constexpr std::uint8_t rc_send_only_with_immediate = 0x05;
inline constexpr std::uint8_t rc_rdma_write_first = 0x06;
inline constexpr std::uint8_t rc_rdma_write_middle = 0x07;
inline constexpr std::uint8_t rc_rdma_write_last = 0x08;
inline constexpr std::uint8_t rc_rdma_write_last_with_immediate = 0x09;
inline constexpr std::uint8_t rc_rdma_write_only = 0x0A;
inline constexpr std::uint8_t rc_rdma_write_only_with_immediate = 0x0B;
inline constexpr std::uint8_t rc_rdma_read_request = 0x0C;
inline constexpr std::uint8_t rc_rdma_read_response_first = 0x0D;
inline constexpr std::uint8_t rc_rdma_read_response_middle = 0x0E;
inline constexpr std::uint8_t rc_rdma_read_response_last = 0x0F;
inline constexpr std::uint8_t rc_rdma_read_response_only = 0x10;
inline constexpr std::uint8_t rc_acknowledge = 0x11;
inline constexpr std::uint8_t rc_atomic_acknowledge = 0x12;
inline constexpr std::uint8_t rc_compare_swap = 0x13;
inline constexpr std::uint8_t rc_fetch_add = 0x14;
inline constexpr std::uint8_t rc_send_last_with_invalidate = 0x16;
inline constexpr std::uint8_t rc_send_only_with_invalidate = 0x17;

inline constexpr std::uint8_t uc_send_only = 0x24;
inline constexpr std::uint8_t uc_rdma_write_only = 0x2A;
inline constexpr std::uint8_t ud_send_only = 0x64;
inline constexpr std::uint8_t ud_send_only_with_immediate = 0x65;

// A17.9.2: Congestion Notification Packet, sent by the notification point (receiver)
// back to the reaction point; BECN set, 16 reserved bytes after the BTH.
inline constexpr std::uint8_t cnp = 0x81;

inline constexpr std::uint8_t service_mask = 0xE0;
inline constexpr std::uint8_t operation_mask = 0x1F;
}  // namespace roce_opcode

enum class transport_service : std::uint8_t {
  rc = 0,   // 000 reliable connection
  uc = 1,   // 001 unreliable connection
  rd = 2,   // 010 reliable datagram
  ud = 3,   // 011 unreliable datagram
  cnp = 4,  // 100 (A17.9.2)
  xrc = 5,  // 101 extended reliable connection
  manufacturer_specific_6 = 6,
  manufacturer_specific_7 = 7,
};
[[nodiscard]] constexpr transport_service service_of(std::uint8_t opcode) noexcept {
  return static_cast<transport_service>(opcode >> 5);
}

// Base Transport Header, 9.2 figure 31 (12 bytes). In RoCEv2 the first reserved byte
// carries FECN (bit 7) and BECN (bit 6) (A17.9.2); the ICRC masks that whole byte.
class bth {
 public:
  static constexpr std::uint8_t fecn_bit = 0x80;
  static constexpr std::uint8_t becn_bit = 0x40;

  [[nodiscard]] constexpr std::uint8_t opcode() const noexcept { return opcode_; }
  [[nodiscard]] constexpr bool solicited() const noexcept { return (flags_ & 0x80) != 0; }
  [[nodiscard]] constexpr bool migreq() const noexcept { return (flags_ & 0x40) != 0; }
  // Bytes of padding after the payload that make it a multiple of 4 (9.2.3).
  [[nodiscard]] constexpr std::uint8_t pad_count() const noexcept { return (flags_ >> 4) & 0x3; }
  [[nodiscard]] constexpr std::uint8_t tver() const noexcept { return flags_ & 0x0F; }
  [[nodiscard]] constexpr std::uint16_t pkey() const noexcept { return pkey_.value(); }
  [[nodiscard]] constexpr std::uint8_t reserved_fecn_becn() const noexcept { return fecn_becn_; }
  [[nodiscard]] constexpr bool fecn() const noexcept { return (fecn_becn_ & fecn_bit) != 0; }
  [[nodiscard]] constexpr bool becn() const noexcept { return (fecn_becn_ & becn_bit) != 0; }
  [[nodiscard]] constexpr std::uint32_t dest_qp() const noexcept { return dest_qp_.value(); }
  [[nodiscard]] constexpr bool ack_req() const noexcept { return (ack_req_ & 0x80) != 0; }
  [[nodiscard]] constexpr std::uint32_t psn() const noexcept { return psn_.value(); }

  constexpr void set_opcode(std::uint8_t v) noexcept { opcode_ = v; }
  // Values wider than their field are masked.
  constexpr void set_flags(bool solicited, bool migreq, std::uint8_t pad_count,
                           std::uint8_t tver) noexcept {
    flags_ = static_cast<std::uint8_t>((solicited ? 0x80 : 0) | (migreq ? 0x40 : 0) |
                                       ((pad_count & 0x3) << 4) | (tver & 0x0F));
  }
  constexpr void set_pkey(std::uint16_t v) noexcept { pkey_.set(v); }
  constexpr void set_fecn_becn(bool fecn, bool becn) noexcept {
    fecn_becn_ = static_cast<std::uint8_t>((fecn ? fecn_bit : 0) | (becn ? becn_bit : 0));
  }
  constexpr void set_dest_qp(std::uint32_t v) noexcept { dest_qp_.set(v); }
  constexpr void set_ack_req(bool v) noexcept { ack_req_ = v ? 0x80 : 0; }
  constexpr void set_psn(std::uint32_t v) noexcept { psn_.set(v); }

 private:
  std::uint8_t opcode_ = 0;
  std::uint8_t flags_ = 0;
  be16 pkey_{};
  std::uint8_t fecn_becn_ = 0;
  be24 dest_qp_{};
  std::uint8_t ack_req_ = 0;
  be24 psn_{};
};
static_assert(sizeof(bth) == 12);

namespace bth_offset {
inline constexpr std::size_t fecn_becn = 4;
}  // namespace bth_offset

// RDMA Extended Transport Header, 9.3.3 (16 bytes): target of a WRITE or READ.
class reth {
 public:
  [[nodiscard]] constexpr std::uint64_t virtual_address() const noexcept { return va_.value(); }
  [[nodiscard]] constexpr std::uint32_t rkey() const noexcept { return rkey_.value(); }
  [[nodiscard]] constexpr std::uint32_t dma_length() const noexcept { return dma_length_.value(); }

  constexpr void set_virtual_address(std::uint64_t v) noexcept { va_.set(v); }
  constexpr void set_rkey(std::uint32_t v) noexcept { rkey_.set(v); }
  constexpr void set_dma_length(std::uint32_t v) noexcept { dma_length_.set(v); }

 private:
  be64 va_{};
  be32 rkey_{};
  be32 dma_length_{};
};
static_assert(sizeof(reth) == 16);

// 9.3.5 table 45: AETH syndrome bits 7..5.
enum class aeth_kind : std::uint8_t { ack, rnr_nak, nak, reserved };

// 9.3.5 table 46: NAK codes in syndrome bits 4..0 when the kind is nak.
enum class nak_code : std::uint8_t {
  psn_sequence_error = 0,
  invalid_request = 1,
  remote_access_error = 2,
  remote_operational_error = 3,
  invalid_rd_request = 4,
};

[[nodiscard]] constexpr aeth_kind aeth_kind_of(std::uint8_t syndrome) noexcept {
  switch (syndrome >> 5) {
    case 0b000: return aeth_kind::ack;
    case 0b001: return aeth_kind::rnr_nak;
    case 0b011: return aeth_kind::nak;
    default: return aeth_kind::reserved;
  }
}

// ACK Extended Transport Header, 9.3.5 (4 bytes).
class aeth {
 public:
  static constexpr std::uint8_t credit_count_invalid = 0x1F;

  [[nodiscard]] constexpr std::uint8_t syndrome() const noexcept { return syndrome_; }
  [[nodiscard]] constexpr aeth_kind kind() const noexcept { return aeth_kind_of(syndrome_); }
  // Low five bits: the credit count of an ACK, the encoded timer of an RNR NAK
  // (9.7.5.2.8 table 48), the NAK code of a NAK.
  [[nodiscard]] constexpr std::uint8_t syndrome_value() const noexcept { return syndrome_ & 0x1F; }
  [[nodiscard]] constexpr nak_code nak() const noexcept {
    return static_cast<nak_code>(syndrome_value());
  }
  [[nodiscard]] constexpr std::uint32_t msn() const noexcept { return msn_.value(); }

  constexpr void set_syndrome(std::uint8_t v) noexcept { syndrome_ = v; }
  constexpr void set(aeth_kind kind, std::uint8_t value) noexcept {
    const std::uint8_t top = kind == aeth_kind::ack ? 0b000
                             : kind == aeth_kind::rnr_nak ? 0b001
                             : kind == aeth_kind::nak ? 0b011
                                                      : 0b010;
    syndrome_ = static_cast<std::uint8_t>((top << 5) | (value & 0x1F));
  }
  constexpr void set_msn(std::uint32_t v) noexcept { msn_.set(v); }

 private:
  std::uint8_t syndrome_ = 0;
  be24 msn_{};
};
static_assert(sizeof(aeth) == 4);

// Sizes of the other extended headers (9.3), needed to find where the payload starts.
inline constexpr std::size_t immdt_bytes = 4;     // 9.3.6 immediate data
inline constexpr std::size_t ieth_bytes = 4;      // 9.3.7 invalidate
inline constexpr std::size_t deth_bytes = 8;      // 9.3.2 datagram (UD, RD)
inline constexpr std::size_t rdeth_bytes = 4;     // 9.3.1 reliable datagram
inline constexpr std::size_t xrceth_bytes = 4;    // 9.3.8 XRC
inline constexpr std::size_t atomiceth_bytes = 28;     // 9.3.4
inline constexpr std::size_t atomicacketh_bytes = 8;   // 9.3.6
inline constexpr std::size_t cnp_reserved_bytes = 16;  // A17.9.2

// Invariant CRC trailer (A17.3.3): CRC-32 stored least significant byte first, unlike
// every other field in the packet.
class icrc_trailer {
 public:
  [[nodiscard]] constexpr std::uint32_t value() const noexcept {
    return std::uint32_t{bytes_[0]} | (std::uint32_t{bytes_[1]} << 8) |
           (std::uint32_t{bytes_[2]} << 16) | (std::uint32_t{bytes_[3]} << 24);
  }
  constexpr void set(std::uint32_t v) noexcept {
    for (std::size_t i = 0; i < 4; ++i) bytes_[i] = static_cast<std::uint8_t>(v >> (8 * i));
  }

 private:
  std::array<std::uint8_t, 4> bytes_{};
};
static_assert(sizeof(icrc_trailer) == 4);

// Where RETH and AETH sit after the BTH and how many extended-header bytes precede the
// payload, per opcode (9.2 table 35 lists which headers each opcode carries).
struct opcode_layout {
  static constexpr std::uint8_t absent = 0xFF;
  bool known = false;                 // an opcode rocelab knows the headers of
  std::uint8_t reth_offset = absent;  // bytes after the end of the BTH
  std::uint8_t aeth_offset = absent;
  std::uint8_t header_bytes = 0;      // extended headers between the BTH and the payload
};

namespace detail {
// Layout of the RC operation `op` (low five opcode bits), after `prefix` bytes of
// service-specific headers (RDETH/DETH for RD, XRCETH for XRC requests).
constexpr opcode_layout rc_layout(std::uint8_t op, std::uint8_t prefix) noexcept {
  opcode_layout l;
  l.known = true;
  auto with_reth = [&](std::uint8_t extra) {
    l.reth_offset = prefix;
    l.header_bytes = static_cast<std::uint8_t>(prefix + sizeof(reth) + extra);
  };
  auto with_aeth = [&](std::uint8_t extra) {
    l.aeth_offset = prefix;
    l.header_bytes = static_cast<std::uint8_t>(prefix + sizeof(aeth) + extra);
  };
  switch (op) {
    case 0x00: case 0x01: case 0x02: case 0x04: case 0x07: case 0x08: case 0x0E:
      l.header_bytes = prefix;
      break;
    case 0x03: case 0x05: case 0x09: case 0x16: case 0x17:  // ImmDt or IETH, both 4 bytes
      l.header_bytes = static_cast<std::uint8_t>(prefix + immdt_bytes);
      break;
    case 0x06: case 0x0A: case 0x0C: with_reth(0); break;
    case 0x0B: with_reth(immdt_bytes); break;
    case 0x0D: case 0x0F: case 0x10: case 0x11: with_aeth(0); break;
    case 0x12: with_aeth(atomicacketh_bytes); break;
    case 0x13: case 0x14: l.header_bytes = static_cast<std::uint8_t>(prefix + atomiceth_bytes); break;
    default: l = opcode_layout{}; break;
  }
  return l;
}
// Responses (READ responses, ACK, atomic ACK) carry no request-side prefix.
constexpr bool is_response(std::uint8_t op) noexcept { return op >= 0x0D && op <= 0x12; }

constexpr std::array<opcode_layout, 256> make_opcode_layouts() noexcept {
  std::array<opcode_layout, 256> t{};
  for (unsigned opcode = 0; opcode < 256; ++opcode) {
    const auto op = static_cast<std::uint8_t>(opcode & roce_opcode::operation_mask);
    opcode_layout l;
    switch (service_of(static_cast<std::uint8_t>(opcode))) {
      case transport_service::rc: l = rc_layout(op, 0); break;
      case transport_service::uc: l = op <= 0x0B ? rc_layout(op, 0) : opcode_layout{}; break;
      case transport_service::rd:
        l = op <= 0x14 ? rc_layout(op, static_cast<std::uint8_t>(
                                           is_response(op) ? rdeth_bytes : rdeth_bytes + deth_bytes))
                       : opcode_layout{};
        break;
      case transport_service::ud:
        if (op == 0x04) l = {true, opcode_layout::absent, opcode_layout::absent, deth_bytes};
        if (op == 0x05)
          l = {true, opcode_layout::absent, opcode_layout::absent, deth_bytes + immdt_bytes};
        break;
      case transport_service::cnp:
        // The 16 reserved bytes are reported as payload, which is what a CNP carries.
        if (opcode == roce_opcode::cnp) l = {true, opcode_layout::absent, opcode_layout::absent, 0};
        break;
      case transport_service::xrc:
        l = (op <= 0x17 && op != 0x15)
                ? rc_layout(op, static_cast<std::uint8_t>(is_response(op) ? 0 : xrceth_bytes))
                : opcode_layout{};
        break;
      default: break;
    }
    t[opcode] = l;
  }
  return t;
}
}  // namespace detail

inline constexpr std::array<opcode_layout, 256> opcode_layouts = detail::make_opcode_layouts();

[[nodiscard]] constexpr const opcode_layout& layout_of(std::uint8_t opcode) noexcept {
  return opcode_layouts[opcode];
}
[[nodiscard]] constexpr bool has_reth(std::uint8_t opcode) noexcept {
  return layout_of(opcode).reth_offset != opcode_layout::absent;
}
[[nodiscard]] constexpr bool has_aeth(std::uint8_t opcode) noexcept {
  return layout_of(opcode).aeth_offset != opcode_layout::absent;
}

// The first packet a requester sends for a work request: SEND or RDMA WRITE FIRST or ONLY
// (with immediate or invalidate), an RDMA READ request, an atomic; on any transport
// that has the operation. Not a CNP, not a middle or last packet, not a response.
[[nodiscard]] constexpr bool begins_message(std::uint8_t opcode) noexcept {
  if (opcode == roce_opcode::cnp || !layout_of(opcode).known) return false;
  switch (opcode & roce_opcode::operation_mask) {
    case 0x00: case 0x04: case 0x05: case 0x06: case 0x0A: case 0x0B:
    case 0x0C: case 0x13: case 0x14: case 0x17: return true;
    default: return false;
  }
}

}  // namespace rocelab::captures::wire
