#pragma once
// Sender-side congestion control, chosen per fabric: DCQCN (RoCEv2) or InfiniBand
// congestion control (IBA vol. 1 annex A10), behind one small interface a NIC model paces
// its QPs with.
//
// InfiniBand congestion control (annex A10):
// - A switch port whose VL queue is above a threshold, and that is the root of the
//   congestion (it has credits to send; a credit-starved port is a victim), marks FECN
//   on one in Marking_Rate + 1 of the packets joining that queue (A10.2.1.1; the twin
//   does this where a packet joins its egress queue).
// - The destination CA returns a BECN to the source for every FECN it receives, in a CN
//   packet or on an ACK (A10.2.2).
// - The source keeps a Congestion Control Table Index (CCTI) per QP: each BECN adds
//   CCTI_Increase (up to CCTI_Limit); every CCTI_Timer the index drops by one (not below
//   CCTI_Min) (A10.2.3, A10.4.3). CCT[CCTI] is an Injection Rate Delay (IRD): the gap the
//   QP leaves after each packet before the next one starts (A10.2.3.1). Each CCT entry is
//   CCT_Shift (2 bits) and CCT_Multiplier (14 bits); IRD = Multiplier << Shift, counted
//   here in units of ird_unit_ns (the annex leaves the time unit to the implementation).
//
// Time comes only through the clock interface (timers for the CCTI decrease), so the
// same objects run in the twin's virtual time and in real time.
// Threading: single-threaded, like the clock.

#include <cstdint>
#include <climits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/fabric/clock.hpp"
#include "rocelab/fabric/dcqcn.hpp"

namespace rocelab::fabric {

// One QP's sender: told about congestion notifications and the bytes it sends, it says at
// which rate the QP may send. A QP with rate_bps() below the line rate starts its next
// packet one packet time at that rate after the previous one started.
class rate_control {
 public:
  virtual ~rate_control() = default;
  // A congestion notification for this QP: a CNP (RoCEv2) or a BECN (InfiniBand).
  virtual void on_cnp(std::int64_t now_ns) = 0;
  // The QP sent a packet of `bytes` (frame bytes without preamble/framing; for a
  // credit control, the payload bytes its credit covers).
  virtual void on_bytes_sent(std::int64_t now_ns, std::uint64_t bytes) = 0;
  [[nodiscard]] virtual double rate_bps() const = 0;

  // Window and credit controls (Ultra Ethernet NSCC and RCCC, uec_congestion_control.hpp)
  // also hear about every acknowledged, NACKed or credited packet and bound the bytes in
  // flight; a pure rate control keeps these defaults (no window, no credit needed).
  static constexpr std::uint64_t unlimited_bytes = UINT64_MAX;
  // A packet of `bytes` payload was acknowledged; `ecn_ce`: it arrived CE-marked;
  // `rtt_ns`: from its (last) transmission to this acknowledgement.
  virtual void on_ack(std::int64_t now_ns, std::uint64_t bytes, bool ecn_ce, std::int64_t rtt_ns) {
    (void)now_ns, (void)bytes, (void)ecn_ce, (void)rtt_ns;
  }
  // A packet of `bytes` payload was trimmed (NACK) or declared lost by timeout.
  virtual void on_nack(std::int64_t now_ns, std::uint64_t bytes) { (void)now_ns, (void)bytes; }
  // The receiver granted `bytes` of payload credit.
  virtual void on_credit(std::int64_t now_ns, std::uint64_t bytes) { (void)now_ns, (void)bytes; }
  // Payload bytes the QP may have unacknowledged in flight.
  [[nodiscard]] virtual std::uint64_t window_bytes() const { return unlimited_bytes; }
  // Payload bytes the QP may still send before it needs more credit.
  [[nodiscard]] virtual std::uint64_t credit_bytes() const { return unlimited_bytes; }
};

// DCQCN's reaction point (dcqcn.hpp) behind rate_control.
class dcqcn_rate_control final : public rate_control {
 public:
  dcqcn_rate_control(const dcqcn_config& cfg, std::int64_t line_rate_bps, clock& clk) : rp_(cfg, line_rate_bps, clk) {}
  void on_cnp(std::int64_t now_ns) override { rp_.on_cnp(now_ns); }
  void on_bytes_sent(std::int64_t now_ns, std::uint64_t bytes) override { rp_.on_bytes_sent(now_ns, bytes); }
  [[nodiscard]] double rate_bps() const override { return rp_.rate_bps(); }
  [[nodiscard]] const reaction_point& reaction() const { return rp_; }

 private:
  reaction_point rp_;
};

struct cct_entry {
  std::uint8_t shift = 0;         // 0..3
  std::uint16_t multiplier = 0;   // 0..16383
  [[nodiscard]] constexpr std::int64_t ird_units() const { return static_cast<std::int64_t>(multiplier) << shift; }
};

struct ib_cc_config {
  // Switch (A10.4.2 Switch Congestion Setting): FECN when the egress VL queue holds more
  // than this many bytes. The annex gives Threshold as 0..15 (0 off, 15 the most
  // aggressive) mapped to depths by the vendor; the depth itself is the knob here.
  std::int64_t marking_threshold_bytes = 64 * 1024;
  // Marking_Rate: packets between two marks of a port (0: every packet above the
  // threshold). A mark per packet drives every source's CCTI up by one per packet, far
  // faster than CCTI_Timer brings it down; spacing the marks lets the sources settle.
  std::uint32_t marking_rate = 10;
  // CA (A10.4.3 CA Congestion Setting and the Congestion Control Table).
  std::uint32_t ccti_increase = 1;
  std::uint32_t ccti_limit = 127;  // the last usable CCT index
  std::uint32_t ccti_min = 0;
  std::int64_t ccti_timer_ns = 10 * 1024;  // CCTI_Timer counts 1.024 us units; 10 units
  std::int64_t ird_unit_ns = 1;
  // Empty: default_cct() (entry i: IRD = 64 i units, so CCTI 127 leaves ~8 us after
  // each packet, about 1% of 400 Gb/s for 4 KiB packets).
  std::vector<cct_entry> cct;

  [[nodiscard]] static std::vector<cct_entry> default_cct(std::uint32_t entries = 128);
  // Knob names as OpenSM's congestion-control configuration spells them
  // (ccti_increase, ccti_limit, ccti_min, ccti_timer [1.024 us units], marking_rate,
  // marking_threshold [bytes]); errors name the knob.
  [[nodiscard]] status set(std::string_view knob, double value);
  [[nodiscard]] status validate() const;
};

struct ib_cc_counters {
  std::uint64_t becns = 0;          // BECNs received
  std::uint64_t ccti_increases = 0; // BECNs that raised the index (not already at the limit)
  std::uint64_t timer_decreases = 0;
  std::uint32_t max_ccti = 0;
};

// The InfiniBand CC reaction of one QP.
class ib_cc_reaction_point final : public rate_control, private timer_client {
 public:
  // `framing_bytes` is what every packet adds on the wire beyond its frame bytes
  // (delimiters), so the packet time matches the link's.
  ib_cc_reaction_point(const ib_cc_config& cfg, std::int64_t line_rate_bps, clock& clk,
                       std::uint32_t framing_bytes = 0);
  ib_cc_reaction_point(const ib_cc_reaction_point&) = delete;
  ib_cc_reaction_point& operator=(const ib_cc_reaction_point&) = delete;
  ~ib_cc_reaction_point() override;

  void on_cnp(std::int64_t now_ns) override;  // a BECN
  void on_bytes_sent(std::int64_t now_ns, std::uint64_t bytes) override;
  // The rate at which a packet of the last size sent, followed by the IRD, repeats:
  // line x t_pkt / (t_pkt + IRD). A pacer that waits one packet time at this rate after
  // each start leaves exactly the IRD between packets.
  [[nodiscard]] double rate_bps() const override;

  [[nodiscard]] std::uint32_t ccti() const { return ccti_; }
  [[nodiscard]] std::int64_t ird_ns() const;
  [[nodiscard]] const ib_cc_counters& counters() const { return counters_; }
  // The CCTI timer fired (public so tests can step it; the clock calls it otherwise).
  void on_ccti_timer(std::int64_t now_ns);

 private:
  void on_timer(std::int64_t now_ns, std::uint64_t cookie) override;

  ib_cc_config cfg_;
  clock& clock_;
  double line_bps_;
  std::uint32_t framing_bytes_;
  std::uint32_t ccti_;
  std::uint64_t last_packet_bytes_ = 4096;
  timer_id timer_ = no_timer;
  ib_cc_counters counters_;
};

enum class congestion_control_kind : std::uint8_t { none, dcqcn, ib_cc };
[[nodiscard]] const char* to_string(congestion_control_kind k);

// The sender-side object for one QP of a NIC at line_rate_bps; null for `none`.
[[nodiscard]] std::unique_ptr<rate_control> make_rate_control(congestion_control_kind kind, const dcqcn_config& dcqcn,
                                                              const ib_cc_config& ib, std::int64_t line_rate_bps,
                                                              clock& clk, std::uint32_t framing_bytes);

}  // namespace rocelab::fabric
