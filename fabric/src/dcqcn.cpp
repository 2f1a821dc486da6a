#include "rocelab/fabric/dcqcn.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace rocelab::fabric {

// Sources for the values:
//  [mlx5]  NVIDIA "DCQCN CC Parameters" (DOCA docs, networking-docs.nvidia.com) and the
//          earlier Mellanox community post "DCQCN Parameters" (DOC-2790), ConnectX-4+.
//  [paper] Zhu et al., SIGCOMM 2015, section 5 "parameter selection" and Algorithm 1/Fig. 6.
//  [ns3]   HPCC ns-3 simulator (rdma-hw.cc, the *Mlx functions and config.txt of
//          /work/shared/scenarios/hpcc-ns3).
dcqcn_config dcqcn_config::mlx5() {
  dcqcn_config c;
  c.rate_to_set_on_first_cnp_mbps = 0;   // [mlx5] default 0
  c.rpg_min_rate_mbps = 1;               // [mlx5] default 1 Mb/s
  c.rpg_max_rate_mbps = 0;               // [mlx5] default 0 = full port speed
  c.initial_alpha_value = 1023;          // [mlx5] default 1023 (fixed point, 10 fraction bits)
  c.dce_tcp_g = 1019;                    // [mlx5] default 1019 -> g = 5/1024
  c.dce_tcp_rtt_us = 1;                  // [mlx5] DcQcnDceAlphaUpdatePeriod default 1 us; [ns3] ALPHA_RESUME_INTERVAL 1
  c.rate_reduce_monitor_period_us = 4;   // [mlx5] default 4 us; [ns3] RATE_DECREASE_INTERVAL 4
  c.rpg_time_reset_us = 300;             // [mlx5] default 300 us; [ns3] RP_TIMER 300
  c.rpg_byte_reset_bytes = 32767;        // [mlx5] default 32767 bytes
  c.rpg_threshold = 1;                   // [mlx5] default 1; [ns3] FAST_RECOVERY_TIMES 1
  c.rpg_ai_rate_mbps = 5;                // [mlx5] default 5 Mb/s
  c.rpg_hai_rate_mbps = 50;              // [mlx5] default 50 Mb/s
  c.rpg_min_dec_fac_percent = 50;        // [mlx5] default 50 %
  c.clamp_tgt_rate = false;              // [mlx5] default 0; [ns3] CLAMP_TARGET_RATE 0
  c.clamp_tgt_rate_after_time_inc = true;  // [mlx5] default 1
  c.min_time_between_cnps_us = 4;        // [mlx5] ConnectX-5+ default 4 us (ConnectX-4 firmware: 0)
  c.cnp_dscp = 48;                       // [mlx5] default 48
  c.cnp_802p_prio = 6;                   // [mlx5] default 6
  c.byte_counter_enabled = true;         // [mlx5] byte counter on unless rpg_byte_reset = 0
  c.alpha_update_on_cnp = false;         // [mlx5] alpha updated once per DcQcnDceAlphaUpdatePeriod
  return c;
}

dcqcn_config dcqcn_config::paper() {
  dcqcn_config c = mlx5();  // fields the paper does not set keep the firmware's values
  c.initial_alpha_value = mlx5_max_initial_alpha_value;  // [paper] alpha starts at 1: 1023/1024, the firmware's most
  c.dce_tcp_g = 1020;                    // [paper] g = 1/256 -> 1024 - 1024/256
  c.dce_tcp_rtt_us = 55;                 // [paper] alpha timer K = 55 us
  c.rate_reduce_monitor_period_us = 0;   // [paper] the RP cuts on every CNP (the NP spaces them by N)
  c.rpg_time_reset_us = 55;              // [paper] rate increase timer T = 55 us
  c.rpg_byte_reset_bytes = 10 * 1024 * 1024;  // [paper] byte counter B = 10 MB
  c.rpg_threshold = 5;                   // [paper] F = 5 (as in QCN)
  c.rpg_ai_rate_mbps = 40;               // [paper] R_AI = 40 Mb/s
  // R_HAI: kept at the firmware's 50 Mb/s; not checked against the paper's text.
  c.rpg_min_dec_fac_percent = 50;        // the paper's cut is at most 1/2 (alpha <= 1), so this never binds
  c.clamp_tgt_rate = true;               // [paper] Algorithm 1: every CNP sets R_T = R_C
  c.min_time_between_cnps_us = 50;       // [paper] CNP interval N = 50 us
  c.alpha_update_on_cnp = true;          // [paper] alpha = (1-g) alpha + g on each CNP
  return c;
}

namespace {

struct field {
  std::string_view name;
  std::int64_t dcqcn_config::* i = nullptr;
  bool dcqcn_config::* b = nullptr;
  std::uint8_t dcqcn_config::* u8 = nullptr;
};

constexpr field fields[] = {
    {"rate_to_set_on_first_cnp", &dcqcn_config::rate_to_set_on_first_cnp_mbps},
    {"rpg_min_rate", &dcqcn_config::rpg_min_rate_mbps},
    {"rpg_max_rate", &dcqcn_config::rpg_max_rate_mbps},
    {"initial_alpha_value", &dcqcn_config::initial_alpha_value},
    {"dce_tcp_g", &dcqcn_config::dce_tcp_g},
    {"dce_tcp_rtt", &dcqcn_config::dce_tcp_rtt_us},
    {"rate_reduce_monitor_period", &dcqcn_config::rate_reduce_monitor_period_us},
    {"rpg_time_reset", &dcqcn_config::rpg_time_reset_us},
    {"rpg_byte_reset", &dcqcn_config::rpg_byte_reset_bytes},
    {"rpg_threshold", &dcqcn_config::rpg_threshold},
    {"rpg_ai_rate", &dcqcn_config::rpg_ai_rate_mbps},
    {"rpg_hai_rate", &dcqcn_config::rpg_hai_rate_mbps},
    {"rpg_min_dec_fac", &dcqcn_config::rpg_min_dec_fac_percent},
    {"clamp_tgt_rate", nullptr, &dcqcn_config::clamp_tgt_rate},
    {"clamp_tgt_rate_after_time_inc", nullptr, &dcqcn_config::clamp_tgt_rate_after_time_inc},
    {"min_time_between_cnps", &dcqcn_config::min_time_between_cnps_us},
    {"cnp_dscp", nullptr, nullptr, &dcqcn_config::cnp_dscp},
    {"cnp_802p_prio", nullptr, nullptr, &dcqcn_config::cnp_802p_prio},
    {"byte_counter_enabled", nullptr, &dcqcn_config::byte_counter_enabled},
    {"alpha_update_on_cnp", nullptr, &dcqcn_config::alpha_update_on_cnp},
    {"first_cut_after_monitor_period", nullptr, &dcqcn_config::first_cut_after_monitor_period},
};

}  // namespace

status dcqcn_config::set(std::string_view name, std::int64_t value) {
  for (const field& f : fields) {
    if (f.name != name) continue;
    if (f.i != nullptr) {
      this->*f.i = value;
    } else if (f.b != nullptr) {
      if (value != 0 && value != 1)
        return {error_code::invalid_argument, "dcqcn " + std::string(name) + ": expects 0 or 1"};
      this->*f.b = value != 0;
    } else {
      if (value < 0 || value > 255)
        return {error_code::invalid_argument, "dcqcn " + std::string(name) + ": expects 0..255"};
      this->*f.u8 = static_cast<std::uint8_t>(value);
    }
    return validate().with_context("dcqcn " + std::string(name));
  }
  return {error_code::invalid_argument, "unknown dcqcn parameter '" + std::string(name) + "'"};
}

std::optional<std::int64_t> dcqcn_config::get(std::string_view name) const {
  for (const field& f : fields) {
    if (f.name != name) continue;
    if (f.i != nullptr) return this->*f.i;
    if (f.b != nullptr) return (this->*f.b) ? 1 : 0;
    return this->*f.u8;
  }
  return std::nullopt;
}

status dcqcn_config::validate() const {
  auto bad = [](const std::string& what) { return status(error_code::invalid_argument, what); };
  if (rpg_min_rate_mbps < 1) return bad("rpg_min_rate must be >= 1 Mb/s");
  if (rpg_max_rate_mbps < 0 || rate_to_set_on_first_cnp_mbps < 0) return bad("negative rate");
  if (initial_alpha_value < 0 || initial_alpha_value > 1024) return bad("initial_alpha_value outside 0..1024");
  if (dce_tcp_g < 0 || dce_tcp_g > 1023) return bad("dce_tcp_g outside 0..1023");
  if (dce_tcp_rtt_us < 1) return bad("dce_tcp_rtt must be >= 1 us");
  if (rate_reduce_monitor_period_us < 0 || min_time_between_cnps_us < 0) return bad("negative period");
  if (rpg_time_reset_us < 1) return bad("rpg_time_reset must be >= 1 us");
  if (rpg_byte_reset_bytes < 0) return bad("negative rpg_byte_reset");
  if (rpg_threshold < 0) return bad("negative rpg_threshold");
  if (rpg_ai_rate_mbps < 0 || rpg_hai_rate_mbps < 0) return bad("negative increase rate");
  if (rpg_min_dec_fac_percent < 0 || rpg_min_dec_fac_percent > 100) return bad("rpg_min_dec_fac outside 0..100");
  if (cnp_802p_prio > 7 || cnp_dscp > 63) return bad("cnp_802p_prio must be 0..7 and cnp_dscp 0..63");
  if (!std::isfinite(time_scale) || time_scale <= 0) return bad("time_scale must be a positive number");
  return status::success();
}

reaction_point::reaction_point(const dcqcn_config& cfg, std::int64_t line_rate_bps, clock& clk)
    : cfg_(cfg), clock_(clk) {
  // The lab's dilation (dcqcn_config::time_scale): rates / k, times x k, unrounded rates.
  const double k = cfg.time_scale;
  const auto ns = [k](std::int64_t us) { return static_cast<std::int64_t>(std::llround(static_cast<double>(us) * 1000.0 * k)); };
  line_bps_ = static_cast<double>(line_rate_bps);
  max_bps_ = cfg.rpg_max_rate_mbps > 0 ? std::min(line_bps_, cfg.rpg_max_rate_mbps * 1e6 / k) : line_bps_;
  min_bps_ = std::min(max_bps_, cfg.rpg_min_rate_mbps * 1e6 / k);
  ai_bps_ = cfg.rpg_ai_rate_mbps * 1e6 / k;
  hai_bps_ = cfg.rpg_hai_rate_mbps * 1e6 / k;
  g_ = static_cast<double>(1024 - cfg.dce_tcp_g) / 1024.0;
  alpha_period_ns_ = std::max<std::int64_t>(1, ns(cfg.dce_tcp_rtt_us));
  reduce_period_ns_ = ns(cfg.rate_reduce_monitor_period_us);
  time_reset_ns_ = std::max<std::int64_t>(1, ns(cfg.rpg_time_reset_us));
  rc_ = rt_ = max_bps_;
}

reaction_point::~reaction_point() {
  if (rate_timer_ != no_timer) clock_.cancel(rate_timer_);
  if (reduce_timer_ != no_timer) clock_.cancel(reduce_timer_);
}

namespace {

// alpha after k periods without a CNP: x (1-g)^k. Repeated multiplication for small k
// keeps results bit-identical to a simulator that runs one event per period.
double decay(double alpha, double one_minus_g, std::int64_t k) {
  if (k > 4096) return alpha * std::pow(one_minus_g, static_cast<double>(k));
  for (std::int64_t i = 0; i < k; ++i) alpha *= one_minus_g;
  return alpha;
}

}  // namespace

double reaction_point::alpha(std::int64_t now_ns) const {
  if (!active_ || now_ns < alpha_anchor_ns_) return alpha_;
  std::int64_t k = (now_ns - alpha_anchor_ns_) / alpha_period_ns_;
  if (k == 0) return alpha_;
  double a = alpha_;
  if (!cfg_.alpha_update_on_cnp) {
    // First boundary: the period that may have seen a CNP.
    a = cnp_in_alpha_period_ ? (1.0 - g_) * a + g_ : (1.0 - g_) * a;
    --k;
  }
  return decay(a, 1.0 - g_, k);
}

void reaction_point::catch_up_alpha(std::int64_t now_ns) {
  if (!active_ || now_ns < alpha_anchor_ns_) return;
  const std::int64_t k = (now_ns - alpha_anchor_ns_) / alpha_period_ns_;
  if (k == 0) return;
  alpha_ = alpha(now_ns);
  cnp_in_alpha_period_ = false;
  alpha_anchor_ns_ += k * alpha_period_ns_;
}

void reaction_point::on_alpha_timer(std::int64_t now_ns) { catch_up_alpha(now_ns); }

void reaction_point::on_cnp(std::int64_t now_ns) {
  ++counters_.cnps;
  if (!active_) {
    active_ = true;
    alpha_ = static_cast<double>(cfg_.initial_alpha_value) / 1024.0;
    alpha_anchor_ns_ = now_ns;
    reduce_anchor_ns_ = now_ns;
    if (cfg_.rate_to_set_on_first_cnp_mbps > 0) {
      // [mlx5] "Rates (current, target) on first CNP".
      rc_ = rt_ = std::min(max_bps_, cfg_.rate_to_set_on_first_cnp_mbps * 1e6 / cfg_.time_scale);
      t_stage_ = b_stage_ = 0;
      bytes_ = 0;
      arm_rate_timer(now_ns);
      ++counters_.rate_decreases;
    } else if (cfg_.first_cut_after_monitor_period && reduce_period_ns_ > 0) {
      // [ns3] cnp_received_mlx: m_decrease_cnp_arrived is set and CheckRateDecreaseMlx is
      // scheduled rate_reduce_monitor_period + 1 ns later (after the alpha update due at
      // the same microsecond); the rate is untouched until then.
      reduce_anchor_ns_ = now_ns + 1;
      reduce_pending_ = true;
      reduce_timer_ = clock_.schedule(reduce_anchor_ns_ + reduce_period_ns_, *this, reduce_timer_cookie);
    } else {
      cut(now_ns);
    }
    if (cfg_.alpha_update_on_cnp) alpha_ = (1.0 - g_) * alpha_ + g_;
    return;
  }
  catch_up_alpha(now_ns);
  if (reduce_period_ns_ == 0) {
    cut(now_ns);
  } else if (!reduce_pending_) {
    // [ns3] CheckRateDecreaseMlx runs every rate_reduce_monitor_period from the first
    // CNP and cuts once if any CNP arrived since the previous check.
    reduce_pending_ = true;
    const std::int64_t since = now_ns - reduce_anchor_ns_;
    const std::int64_t next = reduce_anchor_ns_ + (since + reduce_period_ns_ - 1) / reduce_period_ns_ * reduce_period_ns_;
    if (next <= now_ns)
      cut(now_ns);
    else
      reduce_timer_ = clock_.schedule(next, *this, reduce_timer_cookie);
  }
  if (cfg_.alpha_update_on_cnp) {
    // [paper] Algorithm 1: after the cut alpha = (1-g) alpha + g; the alpha timer restarts.
    alpha_ = (1.0 - g_) * alpha_ + g_;
    alpha_anchor_ns_ = now_ns;
  } else {
    cnp_in_alpha_period_ = true;
  }
}

void reaction_point::on_rate_reduce_timer(std::int64_t now_ns) {
  reduce_timer_ = no_timer;
  if (reduce_pending_) cut(now_ns);
}

void reaction_point::cut(std::int64_t now_ns) {
  catch_up_alpha(now_ns);
  reduce_pending_ = false;
  // [paper] R_T = R_C on every CNP; [mlx5] only with clamp_tgt_rate, or after a timer
  // increase with clamp_tgt_rate_after_time_inc ([ns3]: "m_EcnClampTgtRate || rpTimeStage != 0").
  if (cfg_.clamp_tgt_rate || (cfg_.clamp_tgt_rate_after_time_inc && t_stage_ > 0)) rt_ = rc_;
  // [paper] R_C = R_C (1 - alpha/2), bounded by [mlx5] rpg_min_dec_fac and rpg_min_rate.
  double next = rc_ * (1.0 - alpha_ / 2.0);
  next = std::max(next, rc_ * static_cast<double>(cfg_.rpg_min_dec_fac_percent) / 100.0);
  rc_ = std::max(next, min_bps_);
  t_stage_ = b_stage_ = 0;
  bytes_ = 0;
  ++counters_.rate_decreases;
  arm_rate_timer(now_ns);
}

void reaction_point::arm_rate_timer(std::int64_t now_ns) {
  if (rate_timer_ != no_timer) clock_.cancel(rate_timer_);
  rate_timer_ = clock_.schedule(now_ns + time_reset_ns_, *this, rate_timer_cookie);
}

void reaction_point::increase(bool by_timer) {
  // Stages count the increase events since the last cut, taken before this one ([ns3]
  // RateIncEventMlx compares rpTimeStage with the threshold, then increments): F events
  // of fast recovery, then additive, then hyper increase once both counters passed F
  // ([paper] Fig. 6: max(T, BC) < F fast recovery; min(T, BC) > F hyper; else additive).
  const bool bytes = cfg_.byte_counter_enabled && cfg_.rpg_byte_reset_bytes > 0;
  const std::int64_t hi = bytes ? std::max(t_stage_, b_stage_) : t_stage_;
  const std::int64_t lo = bytes ? std::min(t_stage_, b_stage_) : t_stage_;
  if (hi < cfg_.rpg_threshold) {
    ++counters_.fast_recovery;
  } else if (lo > cfg_.rpg_threshold) {
    rt_ = std::min(max_bps_, rt_ + hai_bps_);  // [mlx5] rpg_hai_rate per hyper-increase event
    ++counters_.hyper_increase;
  } else {
    rt_ = std::min(max_bps_, rt_ + ai_bps_);
    ++counters_.additive_increase;
  }
  rc_ = std::min(max_bps_, (rt_ + rc_) / 2.0);
  // Halving the gap in floating point can stall one ulp short of R_T; below 1 b/s the
  // difference means nothing to a rate limiter, so land on R_T.
  if (rt_ - rc_ < 1.0) rc_ = rt_;
  if (by_timer)
    ++t_stage_;
  else
    ++b_stage_;
}

void reaction_point::on_rate_timer(std::int64_t now_ns) {
  rate_timer_ = no_timer;
  if (!active_) return;
  increase(true);
  // At the line rate with nothing left to recover, further events change nothing but
  // the stage counters, which the next cut resets; stop the timer until then.
  if (rc_ < max_bps_ || rt_ < max_bps_) arm_rate_timer(now_ns);
}

void reaction_point::on_bytes_sent(std::int64_t /*now_ns*/, std::uint64_t n) {
  if (!active_ || !cfg_.byte_counter_enabled || cfg_.rpg_byte_reset_bytes <= 0) return;
  if (rc_ >= max_bps_ && rt_ >= max_bps_) return;
  bytes_ += n;
  const auto reset = static_cast<std::uint64_t>(cfg_.rpg_byte_reset_bytes);
  while (bytes_ >= reset) {
    bytes_ -= reset;
    increase(false);
  }
}

void reaction_point::on_timer(std::int64_t now_ns, std::uint64_t cookie) {
  if (cookie == rate_timer_cookie)
    on_rate_timer(now_ns);
  else
    on_rate_reduce_timer(now_ns);
}

}  // namespace rocelab::fabric
