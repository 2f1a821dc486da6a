#pragma once
// Configuration of the switch model: ports, the shared buffer and its thresholds
// (Broadcom/SONiC MMU semantics), PFC, ECN and the egress scheduler.
//
// Units are in the names. Buffer sizes are given in bytes and converted to cells of
// cell_bytes (rounded up for reserves and headroom, down for the total buffer), because
// merchant silicon counts cells, not bytes. cell_bytes = 1 gives byte accounting (the
// HPCC ns-3 simulator's choice).
// validate() says what is wrong with a config; switch_model::create calls it.

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/fabric/packet.hpp"

namespace rocelab::fabric {

// A shared-buffer limit for a priority group or queue, on top of its reserve.
// dynamic: limit = alpha x (free cells of the pool), alpha = 2^alpha_log2, which is how
//   Broadcom XGS and SONiC express it (SONiC buffer profile `dynamic_th` is log2(alpha),
//   -7..3, i.e. alpha 1/128..8); the HPCC ns-3 switch uses the same power-of-two form
//   (pfc_a_shift, alpha = 1/2^shift).
// fixed: a static limit in bytes (SONiC `static_th`).
// unlimited: no shared limit of its own (only the pool bounds it).
struct buffer_threshold {
  enum class kind : std::uint8_t { dynamic, fixed, unlimited };
  kind mode = kind::dynamic;
  int alpha_log2 = 0;          // dynamic: alpha = 2^alpha_log2, -7..3
  std::int64_t fixed_bytes = 0;  // fixed

  static constexpr buffer_threshold dynamic(int alpha_log2) { return {kind::dynamic, alpha_log2, 0}; }
  static constexpr buffer_threshold fixed(std::int64_t bytes) { return {kind::fixed, 0, bytes}; }
  static constexpr buffer_threshold unlimited() { return {kind::unlimited, 0, 0}; }
};

// One ingress priority group (port x priority). For a lossless priority the shared limit
// is also the XOFF point (SONiC: a lossless PG profile's dynamic_th/static_th is where
// the PG stops taking shared buffer and PFC XOFF is sent; later arrivals go to headroom).
struct pg_config {
  std::int64_t reserve_bytes = 0;  // guaranteed minimum (SONiC `size`)
  buffer_threshold shared = buffer_threshold::dynamic(0);
  std::int64_t headroom_bytes = 0;  // lossless only: absorbs in-flight data after XOFF (SONiC `xoff`)
  // XON: a fixed level (SONiC `xon`) when xon_bytes >= 0, otherwise XOFF threshold minus
  // xon_offset_bytes (SONiC `xon_offset`; the ns-3 switch's resume offset, 3 KB).
  std::int64_t xon_bytes = -1;
  std::int64_t xon_offset_bytes = 0;
};

// RED-style ECN marking against the instantaneous queue depth in bytes (WRED profile with
// ecn enabled in SONiC). depth <= kmin: 0; kmin < depth <= kmax: pmax x (depth - kmin) /
// (kmax - kmin); depth > kmax: 1. The ns-3 switch (ShouldSendCN) uses the same shape.
struct ecn_config {
  bool enabled = false;
  std::int64_t kmin_bytes = 0;
  std::int64_t kmax_bytes = 0;
  double pmax = 0.0;  // 0..1
};

// One egress queue (port x priority).
struct queue_config {
  std::int64_t reserve_bytes = 0;
  buffer_threshold shared = buffer_threshold::dynamic(0);
  ecn_config ecn;
  // 0: strict priority. >0: DWRR weight; a queue's quantum is weight x dwrr_quantum_bytes.
  std::uint32_t dwrr_weight = 0;
  // Packet trimming: a trimmable packet (packet_flag_trimmable) that would leave more than
  // this many bytes queued ahead of it and itself, or that admission would drop, is cut
  // to switch_config::trim.header_bytes and joins queue trim.priority of the same port.
  // 0: never trimmed here (packets are admitted or dropped as usual).
  std::int64_t trim_threshold_bytes = 0;
};

struct port_config {
  std::int64_t rate_bps = 100'000'000'000;
  double cable_m = 0.0;  // informational, for headroom_calculator
  std::array<pg_config, num_priorities> pgs{};
  std::array<queue_config, num_priorities> queues{};
};

// The PFC watchdog (SONiC `pfcwd`, Broadcom/Mellanox "PFC storm" protection): a lossless
// egress queue that has packets, is held by received PFC and has sent nothing for
// detection_ns is in a storm (a peer stuck sending XOFF, e.g. a NIC whose receive path
// hung); the watchdog then stops honouring that pause so the storm cannot spread back
// through the fabric. It checks every poll_ns, so detection takes detection_ns to
// detection_ns + poll_ns; once no XOFF has arrived for restoration_ns (checked the same
// way) the queue is lossless again.
//   drop:    the queue's packets and new packets to it, and packets of that priority
//            arriving on the stormed port, are dropped (SONiC's default action);
//   forward: the queue sends regardless of the pause;
//   alert:   nothing changes; only the detection is counted.
struct pfc_watchdog_config {
  enum class action_kind : std::uint8_t { drop, forward, alert };
  bool enabled = false;
  std::int64_t detection_ns = 200'000'000;    // SONiC default 200 ms (100..5000 ms)
  std::int64_t restoration_ns = 200'000'000;  // SONiC default 200 ms
  std::int64_t poll_ns = 0;                   // 0: detection_ns / 4
  action_kind action = action_kind::drop;
};

struct pfc_config {
  // Quanta carried in XOFF frames (802.1Qbb: 0..65535 units of 512 bit times).
  std::uint16_t pause_quanta = 0xffff;
  // While a PG stays XOFF the pause is refreshed this often; 0 picks half the pause time
  // at the port's speed, so the peer never resumes between refreshes.
  std::int64_t refresh_interval_ns = 0;
  // A received pause holds until an explicit XON, whatever its quanta (the HPCC ns-3
  // simulator's choice); then no refresh frames are sent either.
  bool pause_until_resume = false;
  // Send a quanta-0 frame when a PG leaves XOFF (SONiC/Broadcom do; without it the peer
  // waits for the quanta to expire).
  bool send_xon = true;
  pfc_watchdog_config watchdog;
};

// Where trimmed packets go (queue_config::trim_threshold_bytes enables trimming per queue).
// UEC 1.0 trims to the headers needed to NACK the packet (64 bytes in UEC's own
// simulator, htsim, `-trimsize`) and forwards them in a high-priority class, so the
// receiver learns of the loss one RTT after it happened.
struct trim_config {
  std::uint32_t header_bytes = 64;
  std::uint8_t priority = 7;  // its queue should be strict priority (dwrr_weight 0)
};

struct switch_config {
  std::vector<port_config> ports;
  std::int64_t buffer_bytes = 32 * 1024 * 1024;
  std::int64_t cell_bytes = 256;
  std::uint8_t lossless_priorities = 0b0000'1000;  // bit p set: priority p is lossless (PFC)
  pfc_config pfc;
  bool ecn_mark_on_dequeue = false;  // false: on enqueue (most merchant silicon); true: HPCC ns-3
  // Strict-priority order: by default a higher priority number is served first
  // (Broadcom/SONiC queue 7 > 0); true serves queue 0 first (HPCC ns-3: queue 0 carries
  // ACK/CNP and is the highest priority).
  bool strict_low_index_first = false;
  std::int64_t dwrr_quantum_bytes = 1518;
  // Preamble+SFD and inter-frame gap added to every frame's serialization time (802.3:
  // 8 + 12 bytes). 0 reproduces the HPCC ns-3 simulator.
  std::int64_t wire_overhead_bytes = 20;
  std::uint64_t ecn_seed = 1;  // seeds the marking decisions; same seed, same marks
  // A frame holds its link for bytes x 8 / rate truncated to whole nanoseconds: the HPCC
  // ns-3 simulator's serialization (QbbNetDevice::TransmitStart makes an ns3::Time of
  // DataRate::CalculateTxTime, and a Time holds whole ns, truncated). False: exact to
  // the picosecond, as a MAC sends.
  bool frame_time_whole_ns = false;
  trim_config trim;
};

[[nodiscard]] status validate(const switch_config& cfg);

// "drop" | "forward" | "alert" (SONiC pfcwd's action names).
[[nodiscard]] const char* to_string(pfc_watchdog_config::action_kind a) noexcept;
[[nodiscard]] std::optional<pfc_watchdog_config::action_kind> parse_watchdog_action(std::string_view text) noexcept;

}  // namespace rocelab::fabric
