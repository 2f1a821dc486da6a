#pragma once
// InfiniBand link-level flow control: credits per virtual lane (IBA vol. 1 ch. 7.9.4).
//
// The receiver of a link gives each VL a buffer and advertises, in flow-control packets,
// a Flow Control Credit Limit (FCCL): the total number of 64-byte blocks the sender may
// have sent on that VL so far. The sender counts the blocks it has sent (FCTBS) and starts
// a packet only when FCTBS + the packet's blocks <= FCCL. Blocks come back as the
// receiver's buffer drains. So no packet is ever dropped for lack of buffer and no pause
// frame exists: a sender that runs out of credits simply waits ("credit stall", counted
// by IB ports as PortXmitWait).
//
// Counters here are absolute and 64-bit. The wire carries them modulo 4096 (12 bits) and
// the spec's test is (FCCL - (FCTBS + blocks)) mod 4096 <= 2048, the same test while
// fewer than 2048 blocks (128 KiB) are outstanding; a larger VL buffer is modelled as if
// the field were wider (real switches with more buffer per VL return credits often enough
// that the advertised window stays within it).
//
// Pieces:
// - credit_sender: the transmit side of one port (all VLs), with its stall intervals.
// - credit_receiver: the receive side of one port: VL buffer capacities and the FCCL they
//   give from the blocks freed so far.
// - credit_flow_control: both sides for every port of a switch, behind the
//   link_flow_control seam the switch model calls (the PFC implementation's place), with
//   flow-control packets leaving through a credit_link.
//
// Threading: single-threaded, like the clock that drives it.

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/fabric/clock.hpp"
#include "rocelab/fabric/link_flow_control.hpp"
#include "rocelab/fabric/switch_config.hpp"

namespace rocelab::fabric {

inline constexpr std::int64_t ib_credit_block_bytes = 64;  // IBA 7.9.4.1: one credit is 64 bytes
// A flow-control packet on the wire: 4 bytes (Op, FCTBS, VL, FCCL) + 2 bytes LPCRC
// (IBA 7.9.4.3).
inline constexpr std::uint32_t ib_flow_control_packet_bytes = 6;

[[nodiscard]] constexpr std::int64_t credit_blocks_of(std::int64_t bytes) {
  return (bytes + ib_credit_block_bytes - 1) / ib_credit_block_bytes;
}

// A VL of a port had data it could not send for lack of credits, from start_ns to end_ns.
struct credit_stall {
  std::uint8_t vl = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
};

// Transmit side of one port. A VL may start a packet when its available credits cover
// the largest packet the link carries (max_packet_bytes): the port's arbiter decides
// before it knows which packet of the VL goes next, so it asks for the worst case. This
// wastes at most one packet of the receiver's buffer and never overdraws it.
class credit_sender {
 public:
  credit_sender() = default;
  explicit credit_sender(std::uint32_t max_packet_bytes)
      : max_packet_blocks_(credit_blocks_of(max_packet_bytes)) {}

  // The FCCL the receiver advertised for vl (a flow-control packet arrived, or the link
  // came up). Limits only grow; an older, smaller FCCL is ignored (updates may be
  // reordered with respect to the counters they carry, never on one wire).
  void on_update(std::uint8_t vl, std::int64_t fccl_blocks, std::int64_t now_ns);
  // A packet of `bytes` starts on vl. Its blocks must be available (allowed()).
  void on_transmit(std::uint8_t vl, std::uint32_t bytes, std::int64_t now_ns);

  [[nodiscard]] std::int64_t available_blocks(std::uint8_t vl) const { return limit_[vl] - sent_[vl]; }
  [[nodiscard]] bool allowed(std::uint8_t vl) const { return available_blocks(vl) >= max_packet_blocks_; }
  // Bit v set: VL v may start a packet now.
  [[nodiscard]] std::uint8_t allowed_mask() const { return allowed_mask_; }
  [[nodiscard]] std::int64_t sent_blocks(std::uint8_t vl) const { return sent_[vl]; }  // FCTBS
  [[nodiscard]] std::int64_t limit_blocks(std::uint8_t vl) const { return limit_[vl]; }  // FCCL
  [[nodiscard]] std::int64_t max_packet_blocks() const { return max_packet_blocks_; }

  // Stall intervals so far; close_stalls(now) ends the open ones (at the end of a run).
  [[nodiscard]] const std::vector<credit_stall>& stalls() const { return stalls_; }
  void close_stalls(std::int64_t now_ns);
  [[nodiscard]] std::int64_t stalled_ns() const { return stalled_ns_; }

 private:
  void refresh(std::uint8_t vl, std::int64_t now_ns);

  std::int64_t max_packet_blocks_ = credit_blocks_of(4096 + 128);
  std::array<std::int64_t, num_priorities> limit_{};
  std::array<std::int64_t, num_priorities> sent_{};
  std::array<std::int64_t, num_priorities> stall_start_{};  // valid while the VL's stalling_ bit is set
  std::uint8_t stalling_ = 0;
  std::uint8_t allowed_mask_ = 0;
  std::uint8_t ever_updated_ = 0;  // a VL that never got credits is not in use, not stalled
  std::vector<credit_stall> stalls_;
  std::int64_t stalled_ns_ = 0;
};

// Receive side of one port: capacity_blocks[vl] of buffer per VL (0: VL not configured).
// FCCL = capacity + blocks freed so far (IBA 7.9.4.2 computes it as ABR + free blocks,
// which is the same number).
class credit_receiver {
 public:
  credit_receiver() = default;
  explicit credit_receiver(const std::array<std::int64_t, num_priorities>& capacity_blocks)
      : capacity_(capacity_blocks) {}

  void on_received(std::uint8_t vl, std::int64_t blocks) { occupancy_[vl] += blocks; }
  void on_freed(std::uint8_t vl, std::int64_t blocks) {
    occupancy_[vl] -= blocks;
    freed_[vl] += blocks;
  }
  // The buffer reports its occupancy after a change; the difference says which.
  void on_occupancy(std::uint8_t vl, std::int64_t occupancy_blocks) {
    const std::int64_t d = occupancy_blocks - occupancy_[vl];
    if (d > 0) on_received(vl, d);
    if (d < 0) on_freed(vl, -d);
  }
  [[nodiscard]] std::int64_t fccl(std::uint8_t vl) const { return capacity_[vl] + freed_[vl]; }
  [[nodiscard]] std::int64_t capacity_blocks(std::uint8_t vl) const { return capacity_[vl]; }
  [[nodiscard]] std::int64_t occupancy_blocks(std::uint8_t vl) const { return occupancy_[vl]; }

 private:
  std::array<std::int64_t, num_priorities> capacity_{};
  std::array<std::int64_t, num_priorities> occupancy_{};
  std::array<std::int64_t, num_priorities> freed_{};
};

// Where a switch's flow-control packets go: the driver (twin, soft switch) puts them on
// the link of `port` toward the peer, which hands the FCCL to its credit_sender.
class credit_link {
 public:
  virtual void send_credit_update(std::uint16_t port, std::uint8_t vl, std::int64_t fccl_blocks,
                                  std::int64_t now_ns) = 0;

 protected:
  ~credit_link() = default;
};

struct credit_config {
  // Largest packet on the links, in bytes (IB MTU + headers); what a VL must have credits
  // for before it may start.
  std::uint32_t max_packet_bytes = 4096 + 128;
  // Flow-control packets for one VL of a port are sent at most this often (0: after every
  // change). IBA requires one at least every 65,536 symbol times; HCAs and switches send
  // them as buffer frees, coalesced.
  std::int64_t min_update_interval_ns = 0;
};

// Credit-based flow control for every port of a switch. The VLs are the switch config's
// lossless priorities; each (port, VL) buffer is that PG's static shared limit
// (pg_config.shared = fixed(bytes)), with no reserve and no headroom: credits make
// headroom unnecessary. The switch must count in 64-byte cells so that buffer cells and
// credits are the same unit (create() checks all of this).
class credit_flow_control final : public link_flow_control, private timer_client {
 public:
  [[nodiscard]] static result<std::unique_ptr<credit_flow_control>> create(const switch_config& sw, clock& clk,
                                                                           credit_link& out,
                                                                           const credit_config& cfg = {});
  credit_flow_control(const credit_flow_control&) = delete;
  credit_flow_control& operator=(const credit_flow_control&) = delete;
  ~credit_flow_control() override;

  // link_flow_control
  void on_ingress_occupancy(std::uint16_t port, std::uint8_t prio, const pg_occupancy& occ,
                            std::int64_t now_ns) override;
  [[nodiscard]] bool ingress_stopped(std::uint16_t, std::uint8_t) const override { return false; }
  // IB links carry no PFC frames; one that arrives anyway is counted and ignored.
  void on_pfc_frame(std::uint16_t, std::uint8_t, const std::array<std::uint16_t, num_priorities>&,
                    std::int64_t) override {
    ++ignored_pfc_frames_;
  }
  [[nodiscard]] std::uint8_t transmit_allowed(std::uint16_t port, std::int64_t) const override {
    return tx_[port].allowed_mask();
  }
  // A VL without credits resumes when a flow-control packet arrives (never_ns until then).
  [[nodiscard]] std::int64_t resume_ns(std::uint16_t port, std::uint8_t prio) const override {
    return tx_[port].allowed(prio) ? 0 : never_ns;
  }
  void on_transmit(std::uint16_t port, std::uint8_t prio, std::uint32_t bytes, std::int64_t now_ns) override {
    tx_[port].on_transmit(prio, bytes, now_ns);
  }

  // A flow-control packet from the peer on `port`.
  void on_credit_update(std::uint16_t port, std::uint8_t vl, std::int64_t fccl_blocks, std::int64_t now_ns) {
    tx_[port].on_update(vl, fccl_blocks, now_ns);
  }
  // What this switch advertises on `port` for vl now (the peer's initial credits at link up).
  [[nodiscard]] std::int64_t advertised_fccl(std::uint16_t port, std::uint8_t vl) const { return rx_[port].fccl(vl); }
  [[nodiscard]] const credit_sender& sender(std::uint16_t port) const { return tx_[port]; }
  [[nodiscard]] credit_sender& sender(std::uint16_t port) { return tx_[port]; }
  [[nodiscard]] const credit_receiver& receiver(std::uint16_t port) const { return rx_[port]; }
  [[nodiscard]] std::uint8_t vl_mask() const { return vl_mask_; }
  [[nodiscard]] std::uint64_t updates_sent() const { return updates_sent_; }
  [[nodiscard]] std::uint64_t ignored_pfc_frames() const { return ignored_pfc_frames_; }
  void close_stalls(std::int64_t now_ns) {
    for (auto& t : tx_) t.close_stalls(now_ns);
  }

 private:
  credit_flow_control(const switch_config& sw, clock& clk, credit_link& out, const credit_config& cfg);
  static std::size_t index(std::uint16_t port, std::uint8_t vl) {
    return static_cast<std::size_t>(port) * num_priorities + vl;
  }
  void send_update(std::uint16_t port, std::uint8_t vl, std::int64_t now_ns);
  void on_timer(std::int64_t now_ns, std::uint64_t cookie) override;

  clock& clock_;
  credit_link& out_;
  credit_config cfg_;
  std::uint8_t vl_mask_ = 0;
  std::vector<credit_sender> tx_;           // per port
  std::vector<credit_receiver> rx_;         // per port
  std::vector<std::int64_t> last_update_ns_;  // per (port, VL)
  std::vector<std::int64_t> last_fccl_;       // per (port, VL): last value sent
  std::vector<timer_id> update_timer_;        // per (port, VL)
  std::uint64_t updates_sent_ = 0;
  std::uint64_t ignored_pfc_frames_ = 0;
};

}  // namespace rocelab::fabric
