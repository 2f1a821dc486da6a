#pragma once
// Ultra Ethernet transport congestion control (UEC 1.0 specification, June 2025, the
// congestion management chapter): NSCC at the sender and RCCC at the receiver, behind
// the rate_control interface DCQCN and IB CC implement.
//
// NSCC (network-signal congestion control) keeps one window per flow over all its paths,
// moved by two signals per acknowledged packet: its ECN mark and its queueing delay
// (RTT minus the flow's base RTT), in four cases:
//   no mark, delay <  target: proportional increase (the further below target, the more)
//   no mark, delay >= target: fair increase (a fixed amount per byte, so flows converge)
//   mark,    delay >= target: multiplicative decrease (at most once per base RTT)
//   mark,    delay <  target: hold (the mark came from a queue that is already draining,
//                             or from one the packet's path alone crossed: switch paths,
//                             not rate)
// Increases accumulate and are applied once per adjustment period; a trimmed packet
// (NACK) takes its bytes off the window, and quick adapt sets the window to the bytes
// actually delivered in the last period when that was far below the window after a loss
// or a very long delay. Constants scale with the network's BDP and target delay against a
// 100 Gb/s, 12 us reference, as UEC's own simulator (htsim, uec.cpp initNsccParams) does.
//
// RCCC (receiver credit congestion control): the receiver grants each sender credit for
// the bytes it may send, round robin among its senders, never more outstanding (granted
// and not yet arrived) than its budget, so an incast queues at most the budget at the
// receiver's last hop. rccc_receiver is the receiver's arithmetic; rccc_credit the
// sender's account.
//
// Pure: time comes in as arguments; no clock, no I/O. Single-threaded.

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "rocelab/common/result.hpp"
#include "rocelab/fabric/ib_congestion_control.hpp"

namespace rocelab::fabric {

struct nscc_config {
  std::int64_t line_rate_bps = 400'000'000'000;
  std::uint32_t mss_bytes = 4096;        // payload bytes of a full packet
  std::int64_t base_rtt_ns = 10'000;     // this flow's unloaded RTT
  std::int64_t network_rtt_ns = 10'000;  // the fabric's largest unloaded RTT (scales the constants)
  // Queueing delay NSCC aims for; 0: 0.75 x network RTT with trimming in the network,
  // 1 x without (UEC's simulator defaults).
  std::int64_t target_qdelay_ns = 0;
  bool trimming = true;
  double max_window_bdp = 1.5;  // window ceiling in BDPs of the base RTT; also the start
  std::uint64_t initial_window_bytes = 0;  // 0: the ceiling
  double gamma = 0.8;           // multiplicative decrease: x max(1 - gamma (d - t) / d, 0.5)
  double delay_ewma = 0.0125;   // weight of a new delay sample in the average
  std::uint32_t quick_adapt_gate_log2 = 3;  // quick adapt when delivered < ceiling >> gate
  // The base RTT as htsim learns it (uec.cpp update_base_rtt, on ACKs and, by default
  // update_base_rtt_on_nack, NACKs): base_rtt_ns is only where the flow starts (htsim
  // starts every flow at the network's largest RTT), and an RTT sample below it becomes
  // the base RTT, the window ceiling following (max_window_bdp x its BDP). A NACK's
  // sample counts too, and the trimmed header and its NACK overtake queued data, so a
  // flow whose packets are trimmed learns a base below its unloaded RTT.
  bool learn_base_rtt = false;

  [[nodiscard]] status validate() const;
};

struct nscc_counters {
  std::uint64_t acks = 0, marked_acks = 0;
  std::uint64_t holds = 0;  // marked with delay below target: window left alone
  std::uint64_t proportional_increases = 0, fair_increases = 0, multiplicative_decreases = 0;
  std::uint64_t nacks = 0, quick_adapts = 0;
};

class nscc_window final : public rate_control {
 public:
  explicit nscc_window(const nscc_config& cfg);

  void on_cnp(std::int64_t now_ns) override { (void)now_ns; }  // NSCC reads ECN from ACKs, not CNPs
  void on_bytes_sent(std::int64_t now_ns, std::uint64_t bytes) override { (void)now_ns, (void)bytes; }
  [[nodiscard]] double rate_bps() const override { return line_bps_; }  // window-limited, not paced
  void on_ack(std::int64_t now_ns, std::uint64_t bytes, bool ecn_ce, std::int64_t rtt_ns) override;
  void on_nack(std::int64_t now_ns, std::uint64_t bytes) override;
  [[nodiscard]] std::uint64_t window_bytes() const override { return static_cast<std::uint64_t>(cwnd_); }

  // An RTT sample outside on_ack (a NACK's: the trimmed packet's send to its NACK);
  // lowers the base RTT when learn_base_rtt.
  void on_rtt_sample(std::int64_t rtt_ns);

  [[nodiscard]] double max_window_bytes() const { return max_cwnd_; }
  [[nodiscard]] std::int64_t base_rtt_ns() const { return base_rtt_ns_; }
  [[nodiscard]] std::int64_t target_qdelay_ns() const { return target_ns_; }
  [[nodiscard]] double average_delay_ns() const { return avg_delay_ns_; }
  [[nodiscard]] const nscc_counters& counters() const { return counters_; }

 private:
  void quick_adapt(std::int64_t now_ns, bool loss, std::int64_t delay_ns);
  void adjust(std::int64_t now_ns);
  void bound() { cwnd_ = cwnd_ < min_cwnd_ ? min_cwnd_ : cwnd_ > max_cwnd_ ? max_cwnd_ : cwnd_; }

  double line_bps_;
  bool learn_base_rtt_;
  double max_window_bdp_;
  std::int64_t base_rtt_ns_, target_ns_, adjust_period_ns_;
  double min_cwnd_, max_cwnd_, cwnd_;
  double alpha_, fair_, eta_, fast_scale_, gamma_, ewma_;
  std::uint64_t adjust_bytes_;
  std::uint32_t qa_gate_;
  // Pending increase (bytes^2; divided by the window when applied), bytes acknowledged
  // since the last adjustment, and its time.
  double inc_ = 0;
  std::uint64_t since_adjust_bytes_ = 0;
  std::int64_t last_adjust_ns_ = 0, last_eta_ns_ = 0, last_decrease_ns_ = INT64_MIN / 2;
  double avg_delay_ns_ = 0;
  // Fast increase: a whole window acknowledged with near-zero delay.
  std::uint64_t fast_bytes_ = 0;
  bool fast_ = false;
  // Quick adapt: bytes delivered in the current period, its end, and a loss seen in it.
  std::uint64_t achieved_bytes_ = 0;
  std::int64_t qa_end_ns_ = 0;
  bool qa_loss_ = false;
  nscc_counters counters_;
};

// The sender's side of RCCC: payload bytes it may still send.
class rccc_credit final : public rate_control {
 public:
  explicit rccc_credit(std::int64_t line_rate_bps, std::uint64_t initial_credit_bytes = 0)
      : line_bps_(static_cast<double>(line_rate_bps)), credit_(initial_credit_bytes) {}
  void on_cnp(std::int64_t now_ns) override { (void)now_ns; }
  // `bytes`: the payload sent, which spends credit.
  void on_bytes_sent(std::int64_t now_ns, std::uint64_t bytes) override;
  [[nodiscard]] double rate_bps() const override { return line_bps_; }
  void on_credit(std::int64_t now_ns, std::uint64_t bytes) override { (void)now_ns, credit_ += bytes; }
  [[nodiscard]] std::uint64_t credit_bytes() const override { return credit_; }

 private:
  double line_bps_;
  std::uint64_t credit_;
};

// Sender CC of a UEC flow: NSCC's window, RCCC's credit, or both (the window bounds what
// is in flight, the credit what may still be sent).
class uec_sender_cc final : public rate_control {
 public:
  uec_sender_cc(std::unique_ptr<nscc_window> window, std::unique_ptr<rccc_credit> credit)
      : window_(std::move(window)), credit_(std::move(credit)) {}
  void on_cnp(std::int64_t now_ns) override { (void)now_ns; }
  void on_bytes_sent(std::int64_t now_ns, std::uint64_t bytes) override {
    if (credit_) credit_->on_bytes_sent(now_ns, bytes);
  }
  [[nodiscard]] double rate_bps() const override {
    return window_ ? window_->rate_bps() : credit_ ? credit_->rate_bps() : 0.0;
  }
  void on_ack(std::int64_t now_ns, std::uint64_t bytes, bool ecn_ce, std::int64_t rtt_ns) override {
    if (window_) window_->on_ack(now_ns, bytes, ecn_ce, rtt_ns);
  }
  void on_nack(std::int64_t now_ns, std::uint64_t bytes) override {
    if (window_) window_->on_nack(now_ns, bytes);
  }
  void on_rtt_sample(std::int64_t rtt_ns) {
    if (window_) window_->on_rtt_sample(rtt_ns);
  }
  void on_credit(std::int64_t now_ns, std::uint64_t bytes) override {
    if (credit_) credit_->on_credit(now_ns, bytes);
  }
  [[nodiscard]] std::uint64_t window_bytes() const override {
    return window_ ? window_->window_bytes() : unlimited_bytes;
  }
  [[nodiscard]] std::uint64_t credit_bytes() const override {
    return credit_ ? credit_->credit_bytes() : unlimited_bytes;
  }
  [[nodiscard]] const nscc_window* window() const { return window_.get(); }

 private:
  std::unique_ptr<nscc_window> window_;
  std::unique_ptr<rccc_credit> credit_;
};

struct rccc_grant {
  std::uint32_t flow = 0;
  std::uint64_t bytes = 0;
};

// The receiver's side of RCCC for one receiving NIC: demand per sending flow, the credit
// outstanding (granted, not yet arrived or written off) and the budget bounding it.
class rccc_receiver {
 public:
  // `grant_bytes`: the credit one grant carries at most (a packet's payload, typically).
  rccc_receiver(std::uint64_t budget_bytes, std::uint64_t grant_bytes)
      : budget_(budget_bytes), grant_(grant_bytes == 0 ? 1 : grant_bytes) {}

  // A sender announced `bytes` more to send (a request, or a resend after a loss).
  void add_demand(std::uint32_t flow, std::uint64_t bytes);
  // Credited payload arrived (or was trimmed, or the sender wrote it off as lost): it no
  // longer counts against the budget.
  void on_arrival(std::uint64_t bytes) { outstanding_ -= bytes < outstanding_ ? bytes : outstanding_; }
  // The next grant while the budget allows and a sender has demand; round robin over
  // the senders, one grant_bytes (or the rest of a demand) at a time.
  [[nodiscard]] std::optional<rccc_grant> next_grant();
  [[nodiscard]] std::uint64_t outstanding_bytes() const { return outstanding_; }
  [[nodiscard]] std::uint64_t budget_bytes() const { return budget_; }
  [[nodiscard]] std::uint64_t max_outstanding_bytes() const { return max_outstanding_; }

 private:
  std::uint64_t budget_, grant_;
  std::uint64_t outstanding_ = 0, max_outstanding_ = 0;
  std::deque<std::uint32_t> ready_;                    // flows with demand, in turn order
  std::unordered_map<std::uint32_t, std::uint64_t> demand_;
};

}  // namespace rocelab::fabric
