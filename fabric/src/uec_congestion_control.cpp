#include "rocelab/fabric/uec_congestion_control.hpp"

#include <algorithm>
#include <string>

namespace rocelab::fabric {
namespace {

// UEC's reference network for NSCC's constants: 100 Gb/s and a 12 us RTT.
constexpr double reference_bdp_bytes = 100e9 / 8 * 12e-6;
constexpr double reference_rtt_ns = 12'000;
// Fast increase applies while the delay is this small (a queue of well under a packet at
// 400 Gb/s per hop): the path is idle and the window far below it.
constexpr std::int64_t fast_increase_delay_ns = 1'000;

}  // namespace

status nscc_config::validate() const {
  auto bad = [](const std::string& what) { return status(error_code::invalid_argument, "nscc: " + what); };
  if (line_rate_bps <= 0) return bad("line_rate_bps must be > 0");
  if (mss_bytes == 0) return bad("mss_bytes must be > 0");
  if (base_rtt_ns <= 0 || network_rtt_ns <= 0) return bad("base_rtt_ns and network_rtt_ns must be > 0");
  if (target_qdelay_ns < 0) return bad("target_qdelay_ns must be >= 0");
  if (!(max_window_bdp > 0)) return bad("max_window_bdp must be > 0");
  if (!(gamma > 0 && gamma <= 1)) return bad("gamma must be in (0, 1]");
  if (!(delay_ewma > 0 && delay_ewma <= 1)) return bad("delay_ewma must be in (0, 1]");
  return status::success();
}

nscc_window::nscc_window(const nscc_config& cfg)
    : line_bps_(static_cast<double>(cfg.line_rate_bps)),
      learn_base_rtt_(cfg.learn_base_rtt),
      max_window_bdp_(cfg.max_window_bdp),
      base_rtt_ns_(cfg.base_rtt_ns),
      target_ns_(cfg.target_qdelay_ns > 0 ? cfg.target_qdelay_ns
                                          : static_cast<std::int64_t>(static_cast<double>(cfg.network_rtt_ns) *
                                                                      (cfg.trimming ? 0.75 : 1.0))),
      adjust_period_ns_(cfg.network_rtt_ns),
      gamma_(cfg.gamma),
      ewma_(cfg.delay_ewma),
      adjust_bytes_(8ull * cfg.mss_bytes),
      qa_gate_(cfg.quick_adapt_gate_log2) {
  const double bdp = static_cast<double>(cfg.base_rtt_ns) * 1e-9 * line_bps_ / 8;
  const double network_bdp = static_cast<double>(cfg.network_rtt_ns) * 1e-9 * line_bps_ / 8;
  const double a = network_bdp / reference_bdp_bytes;
  const double b = static_cast<double>(target_ns_) / reference_rtt_ns;
  const double mss = cfg.mss_bytes;
  min_cwnd_ = mss;
  max_cwnd_ = std::max(min_cwnd_, cfg.max_window_bdp * bdp);
  cwnd_ = cfg.initial_window_bytes > 0 ? static_cast<double>(cfg.initial_window_bytes) : max_cwnd_;
  bound();
  // Increase constants (UEC 1.0 NSCC; the same scaling as htsim's initNsccParams):
  // proportional gain per byte and ns below target, fair increase per byte, the additive
  // probe per adjustment period, and the fast-increase factor.
  alpha_ = 4.0 * mss * a * b / static_cast<double>(target_ns_);
  fair_ = 5.0 * mss * a;
  eta_ = 0.15 * mss * a;
  fast_scale_ = 0.25 * a;
}

void nscc_window::on_rtt_sample(std::int64_t rtt_ns) {
  if (!learn_base_rtt_ || rtt_ns <= 0 || rtt_ns >= base_rtt_ns_) return;
  base_rtt_ns_ = rtt_ns;
  // The ceiling only; the window itself is bounded at the next adjustment (htsim's
  // set_cwnd_bounds after its next ACK).
  max_cwnd_ = std::max(min_cwnd_, max_window_bdp_ * static_cast<double>(rtt_ns) * 1e-9 * line_bps_ / 8);
}

void nscc_window::on_ack(std::int64_t now_ns, std::uint64_t bytes, bool ecn_ce, std::int64_t rtt_ns) {
  on_rtt_sample(rtt_ns);
  ++counters_.acks;
  if (ecn_ce) ++counters_.marked_acks;
  const std::int64_t delay = std::max<std::int64_t>(0, rtt_ns - base_rtt_ns_);
  avg_delay_ns_ = ewma_ * static_cast<double>(delay) + (1 - ewma_) * avg_delay_ns_;
  achieved_bytes_ += bytes;
  const double before = cwnd_;
  quick_adapt(now_ns, false, delay);
  if (cwnd_ != before) return;  // quick adapt set the window; this ACK's signal is spent

  bool increased = false;
  if (!ecn_ce && delay < target_ns_) {
    ++counters_.proportional_increases;
    if (delay < fast_increase_delay_ns) {
      fast_bytes_ += bytes;
      fast_ = fast_ || static_cast<double>(fast_bytes_) > cwnd_;
    } else {
      fast_bytes_ = 0;
      fast_ = false;
    }
    if (fast_)
      cwnd_ += static_cast<double>(bytes) * fast_scale_;
    else
      inc_ += alpha_ * static_cast<double>(bytes) * static_cast<double>(target_ns_ - delay);
    increased = true;
  } else if (!ecn_ce) {
    ++counters_.fair_increases;
    inc_ += fair_ * static_cast<double>(bytes);
    increased = true;
  } else if (delay >= target_ns_) {
    fast_ = false;
    fast_bytes_ = 0;
    // At most one decrease per base RTT: the marks of one RTT describe one queue state.
    if (avg_delay_ns_ > static_cast<double>(target_ns_) && now_ns - last_decrease_ns_ > base_rtt_ns_) {
      ++counters_.multiplicative_decreases;
      const double over = (avg_delay_ns_ - static_cast<double>(target_ns_)) / avg_delay_ns_;
      cwnd_ *= std::max(1 - gamma_ * over, 0.5);
      last_decrease_ns_ = now_ns;
    }
  } else {
    // Marked but the delay is low: the mark is from a queue this path met and others did
    // not (load balancing moves away from it) or one already draining. Hold.
    ++counters_.holds;
  }
  bound();
  if (increased) {
    since_adjust_bytes_ += bytes;
    if (since_adjust_bytes_ > adjust_bytes_ || now_ns - last_adjust_ns_ > adjust_period_ns_) adjust(now_ns);
  }
}

// Applies the increases gathered since the last adjustment (their sum is in bytes^2, so
// the window grows by sum / window: the same increase per RTT whatever the window), and
// the additive probe once per period.
void nscc_window::adjust(std::int64_t now_ns) {
  cwnd_ += inc_ / cwnd_;
  if (now_ns - last_eta_ns_ >= adjust_period_ns_) {
    cwnd_ += eta_;
    last_eta_ns_ = now_ns;
  }
  inc_ = 0;
  since_adjust_bytes_ = 0;
  last_adjust_ns_ = now_ns;
  bound();
}

void nscc_window::on_nack(std::int64_t now_ns, std::uint64_t bytes) {
  ++counters_.nacks;
  qa_loss_ = true;
  // A trim says a queue is at its threshold: count it as a delay sample of one network RTT.
  avg_delay_ns_ = ewma_ * static_cast<double>(adjust_period_ns_) + (1 - ewma_) * avg_delay_ns_;
  const double before = cwnd_;
  quick_adapt(now_ns, true, 0);
  if (cwnd_ == before) {
    cwnd_ -= static_cast<double>(bytes);
    bound();
  }
}

// Quick adapt: once per period of base RTT + target delay, if the period saw a loss or a
// delay far past target and delivered far less than the window ceiling, the window
// becomes what was delivered, so a flow in a large incast drops to its share at once.
void nscc_window::quick_adapt(std::int64_t now_ns, bool loss, std::int64_t delay_ns) {
  if (now_ns < qa_end_ns_) return;
  if (qa_end_ns_ != 0 && (loss || qa_loss_ || delay_ns > 4 * target_ns_) &&
      static_cast<double>(achieved_bytes_) < max_cwnd_ / static_cast<double>(1u << qa_gate_)) {
    ++counters_.quick_adapts;
    cwnd_ = std::max(static_cast<double>(achieved_bytes_), min_cwnd_);
    inc_ = 0;
    since_adjust_bytes_ = 0;
    fast_ = false;
    fast_bytes_ = 0;
  }
  qa_loss_ = false;
  achieved_bytes_ = 0;
  qa_end_ns_ = now_ns + base_rtt_ns_ + target_ns_;
}

void rccc_credit::on_bytes_sent(std::int64_t now_ns, std::uint64_t bytes) {
  (void)now_ns;
  credit_ -= std::min(credit_, bytes);
}

void rccc_receiver::add_demand(std::uint32_t flow, std::uint64_t bytes) {
  if (bytes == 0) return;
  auto [it, fresh] = demand_.try_emplace(flow, 0);
  if (it->second == 0) ready_.push_back(flow);
  it->second += bytes;
  (void)fresh;
}

std::optional<rccc_grant> rccc_receiver::next_grant() {
  if (ready_.empty() || outstanding_ >= budget_) return std::nullopt;
  const std::uint32_t flow = ready_.front();
  ready_.pop_front();
  std::uint64_t& d = demand_[flow];
  const std::uint64_t bytes = std::min({d, grant_, budget_ - outstanding_});
  d -= bytes;
  if (d > 0) ready_.push_back(flow);
  outstanding_ += bytes;
  max_outstanding_ = std::max(max_outstanding_, outstanding_);
  return rccc_grant{flow, bytes};
}

}  // namespace rocelab::fabric
