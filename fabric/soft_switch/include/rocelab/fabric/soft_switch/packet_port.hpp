#pragma once
// One switch port on a Linux interface: an AF_PACKET socket with a PACKET_MMAP receive
// ring and sendto(2) or sendmmsg(2) for transmit (with PACKET_QDISC_BYPASS, so frames go
// straight to the driver as a switch ASIC's MAC would take them, without the qdisc).
// send_batch hands up to 64 frames to the kernel in one system call: the per-frame
// syscall is most of the cost of forwarding a small frame.
//
// Ring version (bench/virtual_lab measures both):
// - TPACKET_V2 (default): the kernel hands over every frame as soon as it is written,
//   so a frame's latency through the switch is the loop's, not a timer's.
// - TPACKET_V3: frames are packed into blocks that user space sees only when a block is
//   full or its retire timer (at least 1 ms) expires; cheaper per frame under load, but
//   at low load it adds up to a millisecond of latency, which would swamp RTT-scale
//   congestion control (DCQCN timers are tens of microseconds).
// VLAN tags that the kernel stripped into the ring header (veth offloads tag parsing)
// are put back, so the switch sees the frame as it was on the wire.
// Outgoing frames are not looped back into the ring (PACKET_IGNORE_OUTGOING).
//
// Ownership: the socket and the mapping are owned and released in the destructor.
// Threading: one thread.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include "rocelab/common/result.hpp"
#include "rocelab/common/unique_fd.hpp"

namespace rocelab::fabric::soft_switch {

enum class ring_version : std::uint8_t { v2, v3 };

struct packet_port_options {
  std::string ifname;
  bool receive = true;  // false: send only (a mirror destination), no ring
  ring_version version = ring_version::v2;
  std::uint32_t frame_bytes = 16384;  // v2 ring slot (frame + tpacket header); power of two
  std::uint32_t frames = 512;         // v2 ring slots
  std::uint32_t block_bytes = 1 << 18;  // v3
  std::uint32_t blocks = 16;            // v3
  std::uint32_t block_timeout_ms = 1;   // v3 retire timer
};

struct packet_port_stats {
  std::uint64_t rx_frames = 0, rx_bytes = 0, rx_truncated = 0;
  std::uint64_t tx_frames = 0, tx_bytes = 0, tx_errors = 0;
  std::uint64_t kernel_drops = 0;  // PACKET_STATISTICS tp_drops, accumulated
  // The interface's own drop counters (rtnl_link_stats rx_dropped / tx_dropped) since
  // open or reset_stats. On a veth, tx_dropped counts frames the peer could not take
  // (its backlog or NAPI ring full): sent by the switch, lost before the host saw them.
  std::uint64_t link_rx_dropped = 0, link_tx_dropped = 0;
  // How long frames waited between the kernel's receive timestamp (tp_sec/tp_nsec, the
  // time the frame entered the ring or the stack) and the moment user space took them:
  // the port's share of the switch's reaction time. Max since open, and a log2 histogram
  // (bucket i counts waits in [2^i, 2^(i+1)) microseconds; bucket 0 is anything < 2 us).
  std::int64_t ring_wait_max_ns = 0;
  std::array<std::uint64_t, 16> ring_wait_log2_us{};
  // Frames that waited longer than the port's wait budget (set_wait_budget; 0: none),
  // i.e. arrived while the switch was off the CPU for longer than its reaction budget.
  std::uint64_t ring_wait_over_budget = 0;
};

class packet_port {
 public:
  [[nodiscard]] static result<packet_port> open(const packet_port_options& options);
  packet_port(packet_port&& other) noexcept;
  packet_port& operator=(packet_port&&) = delete;
  packet_port(const packet_port&) = delete;
  ~packet_port();

  // Calls fn(std::span<const std::uint8_t> frame) for up to `budget` received frames and
  // returns how many. The span is valid only during the call.
  template <typename Fn>
  std::size_t receive(std::size_t budget, Fn&& fn);

  // Sends one frame; false (counted in tx_errors) when the kernel refused it (a full
  // queue is not waited on: a switch port drops instead).
  bool send(std::span<const std::uint8_t> frame) noexcept;
  // Sends frames in order, up to max_batch per sendmmsg(2); returns how many the kernel
  // took. A refused frame is counted in tx_errors and skipped; the rest are still sent.
  static constexpr std::size_t max_batch = 64;
  std::size_t send_batch(std::span<const std::span<const std::uint8_t>> frames) noexcept;

  // How long the first frame of the last receive() that returned frames had waited in
  // the ring (ns, 0 without a timestamp): how long the loop was away from this port.
  [[nodiscard]] std::int64_t last_batch_wait_ns() const noexcept { return batch_wait_ns_; }
  // The kernel's receive timestamp (CLOCK_REALTIME, ns) of the frame receive() is handing
  // to its callback; 0 without one. Valid inside the callback.
  [[nodiscard]] std::int64_t frame_stamp_ns() const noexcept { return head_stamp_ns_; }
  [[nodiscard]] int fd() const noexcept { return fd_.get(); }
  [[nodiscard]] int ifindex() const noexcept { return ifindex_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] const packet_port_stats& stats() noexcept;
  // Every counter to 0 (the kernel's drop count too).
  void reset_stats() noexcept;
  // Waits above `budget_ns` count in ring_wait_over_budget; 0 turns that off.
  void set_wait_budget(std::int64_t budget_ns) noexcept { wait_budget_ns_ = budget_ns; }

 private:
  packet_port() = default;
  // One frame at the ring head, if the kernel has handed one over; fills `scratch` when
  // a VLAN tag must be re-inserted. Returns an empty span when nothing is ready.
  std::span<const std::uint8_t> peek(std::span<std::uint8_t> scratch) noexcept;
  void release() noexcept;
  void note_wait(std::int64_t realtime_now_ns) noexcept;
  // The interface's rx_dropped and tx_dropped as the kernel counts them now (0, 0 when
  // they cannot be read).
  [[nodiscard]] std::pair<std::uint64_t, std::uint64_t> read_link_drops() const noexcept;

  std::string name_;
  unique_fd fd_;
  int ifindex_ = 0;
  ring_version version_ = ring_version::v2;
  std::uint8_t* ring_ = nullptr;
  std::size_t ring_bytes_ = 0;
  std::uint32_t frame_bytes_ = 0, frames_ = 0, head_ = 0;  // v2
  std::uint32_t block_bytes_ = 0, blocks_ = 0, block_ = 0;  // v3
  std::uint32_t left_in_block_ = 0;
  std::uint8_t* next_in_block_ = nullptr;
  std::int64_t wait_budget_ns_ = 0;
  std::int64_t batch_wait_ns_ = 0;
  std::int64_t head_stamp_ns_ = 0;  // kernel timestamp (CLOCK_REALTIME) of the frame peek() returned
  std::pair<std::uint64_t, std::uint64_t> link_drops_base_{};  // read_link_drops() at open / reset
  packet_port_stats stats_;
  alignas(8) std::uint8_t vlan_scratch_[16384 + 4];
};

// The current CLOCK_REALTIME, the clock of the ring's timestamps.
[[nodiscard]] std::int64_t ring_clock_ns() noexcept;

template <typename Fn>
std::size_t packet_port::receive(std::size_t budget, Fn&& fn) {
  std::size_t n = 0;
  std::int64_t now = 0;
  while (n < budget) {
    const std::span<const std::uint8_t> frame = peek(vlan_scratch_);
    if (frame.empty()) break;
    // One clock read per batch: the first frame of a batch has waited longest.
    if (n == 0) {
      now = ring_clock_ns();
      batch_wait_ns_ = head_stamp_ns_ != 0 && now > head_stamp_ns_ ? now - head_stamp_ns_ : 0;
    }
    note_wait(now);
    ++stats_.rx_frames;
    stats_.rx_bytes += frame.size();
    fn(frame);
    release();
    ++n;
  }
  return n;
}

}  // namespace rocelab::fabric::soft_switch
