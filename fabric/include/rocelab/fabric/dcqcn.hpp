#pragma once
// DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM
// 2015) as the mlx5 firmware runs it: a reaction point (the sender's per-flow rate
// limiter) and a notification point (the receiver's CNP generator), configured with the
// mlx5 parameter names (units appended to the names).
//
// The same objects serve the soft NIC (real time) and the twin (virtual time): time comes
// in as arguments and timers go through `clock`. A reaction_point registers its own
// timers (rate increase, pending rate decrease), so it is neither copyable nor movable;
// keep flows in a std::deque or behind unique_ptr. The alpha timer is evaluated lazily
// (alpha at time t is computed from the last update), so an idle flow costs no events
// even with mlx5's 1 us alpha period.
//
// Threading: single-threaded, with the clock.

#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>

#include "rocelab/common/result.hpp"
#include "rocelab/fabric/clock.hpp"

namespace rocelab::fabric {

struct dcqcn_config {
  // --- reaction point (mlx5 names; NVIDIA "DCQCN CC Parameters", ConnectX-4 and later) ---
  std::int64_t rate_to_set_on_first_cnp_mbps = 0;  // 0: cut as usual on the first CNP
  std::int64_t rpg_min_rate_mbps = 1;
  std::int64_t rpg_max_rate_mbps = 0;        // 0: the line rate
  std::int64_t initial_alpha_value = 1023;   // alpha on the first CNP, x/1024 (1023 ~ 1.0); 1024 allowed (= 1.0, ns-3)
  // mlx5 fixed point: with a CNP in the period alpha = (g/1024) alpha + (1024-g)/1024,
  // without one alpha = (g/1024) alpha; so the paper's g is (1024 - dce_tcp_g)/1024.
  std::int64_t dce_tcp_g = 1019;
  std::int64_t dce_tcp_rtt_us = 1;           // alpha update period (the paper's K)
  std::int64_t rate_reduce_monitor_period_us = 4;  // CNPs within a period cause one cut; 0: cut on every CNP
  std::int64_t rpg_time_reset_us = 300;      // rate increase timer (the paper's T)
  std::int64_t rpg_byte_reset_bytes = 32767; // rate increase byte counter (the paper's B)
  std::int64_t rpg_threshold = 1;            // increase events before leaving fast recovery (the paper's F)
  std::int64_t rpg_ai_rate_mbps = 5;
  std::int64_t rpg_hai_rate_mbps = 50;
  std::int64_t rpg_min_dec_fac_percent = 50; // one cut leaves at least this % of the rate
  bool clamp_tgt_rate = false;               // every cut sets target = current rate
  bool clamp_tgt_rate_after_time_inc = true; // ... or only if a timer increase happened since the last cut
  // --- notification point ---
  std::int64_t min_time_between_cnps_us = 4; // per flow; 0: a CNP for every CE packet
  std::uint8_t cnp_dscp = 48;
  std::uint8_t cnp_802p_prio = 6;
  // --- model choices that are not mlx5 knobs ---
  bool byte_counter_enabled = true;  // false: increases by timer only (HPCC ns-3)
  // true (paper, Algorithm 1): alpha rises at each CNP and the alpha timer restarts.
  // false (mlx5 firmware, HPCC ns-3 UpdateAlphaMlx): alpha is updated at the end of every
  // dce_tcp_rtt period since the first CNP, rising if a CNP arrived in that period.
  bool alpha_update_on_cnp = false;
  // true (HPCC ns-3 cnp_received_mlx): the first CNP only starts the alpha and
  // rate-reduce timers (alpha = initial, rate unchanged); the first cut happens when the
  // monitor period that CNP opened ends, 1 ns after its alpha update, and later cuts on
  // that lattice. false: the first CNP cuts at once (rate_to_set_on_first_cnp_mbps 0).
  bool first_cut_after_monitor_period = false;
  // A lab's dilation k: a fabric run at 1/k of the hardware rate it stands for (the
  // virtual lab: 0.5 Gb/s for 100 Gb/s, k = 200) runs this DCQCN with every time above
  // multiplied by k and every rate divided by k, exactly (fractional rates, nothing
  // clamped); bytes (the byte counter) stay as they are, as queues in bytes do. The knobs
  // keep the hardware's values, so an export is the knobs as they are. 1 on hardware.
  double time_scale = 1.0;

  // mlx5 firmware defaults (the default preset).
  [[nodiscard]] static dcqcn_config mlx5();
  // The DCQCN paper's values, as a real NIC takes them (initial_alpha_value 1023: the
  // firmware's closest to the paper's alpha = 1).
  [[nodiscard]] static dcqcn_config paper();
  // The largest initial_alpha_value the mlx5 firmware takes (0..1023); the model also
  // takes 1024 (alpha = 1.0, as ns-3 does), which a NIC refuses.
  static constexpr std::int64_t mlx5_max_initial_alpha_value = 1023;

  // Sets / reads a field by its mlx5 name (no unit suffix: "rpg_time_reset",
  // "dce_tcp_g", "cnp_802p_prio", ...) for spec files and `--set`; booleans are 0/1.
  [[nodiscard]] status set(std::string_view mlx5_name, std::int64_t value);
  [[nodiscard]] std::optional<std::int64_t> get(std::string_view mlx5_name) const;
  [[nodiscard]] status validate() const;
};

struct reaction_point_counters {
  std::uint64_t cnps = 0;
  std::uint64_t rate_decreases = 0;
  std::uint64_t fast_recovery = 0, additive_increase = 0, hyper_increase = 0;
};

// Per-flow sender state. Rates in bits per second (double: the halving and averaging
// steps are fractional; the NIC's pacing quantizes them).
class reaction_point final : private timer_client {
 public:
  reaction_point(const dcqcn_config& cfg, std::int64_t line_rate_bps, clock& clk);
  reaction_point(const reaction_point&) = delete;
  reaction_point& operator=(const reaction_point&) = delete;
  ~reaction_point();

  // A CNP for this flow arrived.
  void on_cnp(std::int64_t now_ns);
  // The flow sent `bytes` (drives the byte counter).
  void on_bytes_sent(std::int64_t now_ns, std::uint64_t bytes);
  // Timer expiries. The reaction point arms its own timers through the clock; these are
  // public so a driver (or a test) can also step them by hand.
  void on_alpha_timer(std::int64_t now_ns);  // brings alpha up to date (lazy timer)
  void on_rate_timer(std::int64_t now_ns);   // rpg_time_reset expired: one rate increase
  void on_rate_reduce_timer(std::int64_t now_ns);  // end of a monitor period with a CNP pending

  [[nodiscard]] double rate_bps() const { return rc_; }
  [[nodiscard]] double target_rate_bps() const { return rt_; }
  // Alpha as of now_ns (applies the decays due since the last update without changing state).
  [[nodiscard]] double alpha(std::int64_t now_ns) const;
  [[nodiscard]] std::int64_t time_stage() const { return t_stage_; }
  [[nodiscard]] std::int64_t byte_stage() const { return b_stage_; }
  [[nodiscard]] const reaction_point_counters& counters() const { return counters_; }
  [[nodiscard]] const dcqcn_config& config() const { return cfg_; }

 private:
  enum cookie : std::uint64_t { rate_timer_cookie = 1, reduce_timer_cookie = 2 };
  void on_timer(std::int64_t now_ns, std::uint64_t cookie) override;
  void catch_up_alpha(std::int64_t now_ns);
  void cut(std::int64_t now_ns);
  void increase(bool by_timer);
  void arm_rate_timer(std::int64_t now_ns);

  dcqcn_config cfg_;
  clock& clock_;
  double line_bps_, max_bps_, min_bps_, ai_bps_, hai_bps_, g_;
  std::int64_t alpha_period_ns_, reduce_period_ns_, time_reset_ns_;
  double rc_, rt_;
  double alpha_ = 1.0;
  std::int64_t alpha_anchor_ns_ = 0;   // alpha_ is valid at this lattice point
  bool cnp_in_alpha_period_ = false;
  bool active_ = false;                // a CNP has been seen
  std::int64_t reduce_anchor_ns_ = 0;  // monitor-period lattice origin (first CNP)
  bool reduce_pending_ = false;
  std::int64_t t_stage_ = 0, b_stage_ = 0;
  std::uint64_t bytes_ = 0;
  timer_id rate_timer_ = no_timer, reduce_timer_ = no_timer;
  reaction_point_counters counters_;
};

// Per-flow receiver state: a CE-marked packet causes a CNP, at most one per
// min_time_between_cnps per flow (the paper's N = 50 us; mlx5 4 us).
class notification_point {
 public:
  explicit notification_point(const dcqcn_config& cfg)
      : min_gap_ns_(static_cast<std::int64_t>(std::llround(static_cast<double>(cfg.min_time_between_cnps_us) * 1000.0 *
                                                           cfg.time_scale))),
        dscp_(cfg.cnp_dscp),
        prio_(cfg.cnp_802p_prio) {}

  // Returns true when the receiver must send a CNP now.
  bool on_packet(std::int64_t now_ns, bool ce) {
    if (!ce) return false;
    ++ce_packets_;
    if (sent_any_ && now_ns - last_cnp_ns_ < min_gap_ns_) return false;
    sent_any_ = true;
    last_cnp_ns_ = now_ns;
    ++cnps_sent_;
    return true;
  }
  // Markings the CNP carries (IP DSCP and 802.1p PCP).
  [[nodiscard]] std::uint8_t cnp_dscp() const { return dscp_; }
  [[nodiscard]] std::uint8_t cnp_802p_prio() const { return prio_; }
  [[nodiscard]] std::uint64_t ce_packets() const { return ce_packets_; }
  [[nodiscard]] std::uint64_t cnps_sent() const { return cnps_sent_; }

 private:
  std::int64_t min_gap_ns_;
  std::uint8_t dscp_, prio_;
  bool sent_any_ = false;
  std::int64_t last_cnp_ns_ = 0;
  std::uint64_t ce_packets_ = 0, cnps_sent_ = 0;
};

}  // namespace rocelab::fabric
