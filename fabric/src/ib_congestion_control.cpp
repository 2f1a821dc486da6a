#include "rocelab/fabric/ib_congestion_control.hpp"

#include <algorithm>
#include <cmath>

namespace rocelab::fabric {

std::vector<cct_entry> ib_cc_config::default_cct(std::uint32_t entries) {
  std::vector<cct_entry> t(entries);
  for (std::uint32_t i = 0; i < entries; ++i) t[i] = cct_entry{0, static_cast<std::uint16_t>(std::min<std::uint32_t>(64 * i, 16383))};
  return t;
}

status ib_cc_config::set(std::string_view knob, double value) {
  auto bad = [&](const std::string& what) {
    return status(error_code::invalid_argument, "ib_cc " + std::string(knob) + ": " + what);
  };
  if (!(value >= 0) || !std::isfinite(value)) return bad("expects a non-negative number");
  const auto v = static_cast<std::int64_t>(std::llround(value));
  if (knob == "ccti_increase") {
    ccti_increase = static_cast<std::uint32_t>(v);
  } else if (knob == "ccti_limit") {
    ccti_limit = static_cast<std::uint32_t>(v);
  } else if (knob == "ccti_min") {
    ccti_min = static_cast<std::uint32_t>(v);
  } else if (knob == "ccti_timer") {
    ccti_timer_ns = v * 1024;  // 1.024 us units (A10.4.3.1)
  } else if (knob == "marking_rate") {
    marking_rate = static_cast<std::uint32_t>(v);
  } else if (knob == "marking_threshold") {
    marking_threshold_bytes = v;
  } else if (knob == "ird_unit_ns") {
    ird_unit_ns = v;
  } else {
    return status(error_code::invalid_argument,
                  "unknown ib_cc parameter '" + std::string(knob) +
                      "' (ccti_increase, ccti_limit, ccti_min, ccti_timer, marking_rate, marking_threshold, ird_unit_ns)");
  }
  return validate().with_context("ib_cc " + std::string(knob));
}

status ib_cc_config::validate() const {
  auto bad = [](const std::string& what) { return status(error_code::invalid_argument, what); };
  const std::size_t entries = cct.empty() ? 128 : cct.size();
  if (ccti_limit >= entries) return bad("ccti_limit must be below the CCT size (" + std::to_string(entries) + ")");
  if (ccti_min > ccti_limit) return bad("ccti_min must be <= ccti_limit");
  if (ccti_increase < 1) return bad("ccti_increase must be >= 1");
  if (ccti_timer_ns <= 0) return bad("ccti_timer must be > 0");
  if (ird_unit_ns <= 0) return bad("ird_unit_ns must be > 0");
  if (marking_threshold_bytes <= 0) return bad("marking_threshold must be > 0");
  for (const cct_entry& e : cct)
    if (e.shift > 3 || e.multiplier > 16383) return bad("CCT entries: shift 0..3, multiplier 0..16383");
  return status::success();
}

ib_cc_reaction_point::ib_cc_reaction_point(const ib_cc_config& cfg, std::int64_t line_rate_bps, clock& clk,
                                           std::uint32_t framing_bytes)
    : cfg_(cfg), clock_(clk), line_bps_(static_cast<double>(line_rate_bps)), framing_bytes_(framing_bytes),
      ccti_(cfg.ccti_min) {
  if (cfg_.cct.empty()) cfg_.cct = ib_cc_config::default_cct();
}

ib_cc_reaction_point::~ib_cc_reaction_point() {
  if (timer_ != no_timer) clock_.cancel(timer_);
}

void ib_cc_reaction_point::on_cnp(std::int64_t now_ns) {
  ++counters_.becns;
  const std::uint32_t next = std::min(ccti_ + cfg_.ccti_increase, cfg_.ccti_limit);
  if (next > ccti_) ++counters_.ccti_increases;
  ccti_ = next;
  counters_.max_ccti = std::max(counters_.max_ccti, ccti_);
  // The timer runs while the index is above its minimum; a BECN does not restart it
  // (A10.4.3.1: CCTI_Timer is a free-running period per SL/QP).
  if (timer_ == no_timer && ccti_ > cfg_.ccti_min) timer_ = clock_.schedule(now_ns + cfg_.ccti_timer_ns, *this, 0);
}

void ib_cc_reaction_point::on_bytes_sent(std::int64_t, std::uint64_t bytes) { last_packet_bytes_ = bytes; }

std::int64_t ib_cc_reaction_point::ird_ns() const {
  const std::size_t i = std::min<std::size_t>(ccti_, cfg_.cct.size() - 1);
  return cfg_.cct[i].ird_units() * cfg_.ird_unit_ns;
}

double ib_cc_reaction_point::rate_bps() const {
  const std::int64_t ird = ird_ns();
  if (ird == 0) return line_bps_;
  const double pkt_ns = static_cast<double>(last_packet_bytes_ + framing_bytes_) * 8e9 / line_bps_;
  return line_bps_ * pkt_ns / (pkt_ns + static_cast<double>(ird));
}

void ib_cc_reaction_point::on_ccti_timer(std::int64_t now_ns) {
  if (timer_ != no_timer) {  // stepped by hand: the pending expiry is this one
    clock_.cancel(timer_);
    timer_ = no_timer;
  }
  if (ccti_ > cfg_.ccti_min) {
    --ccti_;
    ++counters_.timer_decreases;
  }
  if (ccti_ > cfg_.ccti_min) timer_ = clock_.schedule(now_ns + cfg_.ccti_timer_ns, *this, 0);
}

void ib_cc_reaction_point::on_timer(std::int64_t now_ns, std::uint64_t) {
  timer_ = no_timer;
  on_ccti_timer(now_ns);
}

const char* to_string(congestion_control_kind k) {
  switch (k) {
    case congestion_control_kind::none: return "none";
    case congestion_control_kind::dcqcn: return "dcqcn";
    case congestion_control_kind::ib_cc: return "ib_cc";
  }
  return "none";
}

std::unique_ptr<rate_control> make_rate_control(congestion_control_kind kind, const dcqcn_config& dcqcn,
                                                const ib_cc_config& ib, std::int64_t line_rate_bps, clock& clk,
                                                std::uint32_t framing_bytes) {
  switch (kind) {
    case congestion_control_kind::dcqcn: return std::make_unique<dcqcn_rate_control>(dcqcn, line_rate_bps, clk);
    case congestion_control_kind::ib_cc:
      return std::make_unique<ib_cc_reaction_point>(ib, line_rate_bps, clk, framing_bytes);
    case congestion_control_kind::none: return nullptr;
  }
  return nullptr;
}

}  // namespace rocelab::fabric
