#include "rocelab/experiments/qualify/qualify.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace rocelab::experiments {
namespace {

using fabric::buffer_threshold;

std::int64_t cells_up(std::int64_t bytes, std::int64_t cell) {
  return (std::max<std::int64_t>(bytes, 0) + cell - 1) / cell;
}

// A shared limit in cells with `free_cells` of its pool free (SONiC/Broadcom semantics:
// dynamic = alpha x free, alpha = 2^dynamic_th; static = bytes; unlimited = the pool).
std::int64_t limit_cells(const buffer_threshold& t, std::int64_t free_cells, std::int64_t cell, std::int64_t pool) {
  switch (t.mode) {
    case buffer_threshold::kind::dynamic:
      free_cells = std::max<std::int64_t>(free_cells, 0);
      return t.alpha_log2 >= 0 ? free_cells << t.alpha_log2 : free_cells >> -t.alpha_log2;
    case buffer_threshold::kind::fixed:
      return t.fixed_bytes / cell;
    case buffer_threshold::kind::unlimited:
      return pool;
  }
  return pool;
}

// The smallest shared occupancy s (cells) with s >= limit(pool - s): where one filling PG
// meets its own dynamic limit. limit(pool - s) falls as s grows, so bisection finds it.
std::int64_t meeting_point(const buffer_threshold& t, std::int64_t pool, std::int64_t cell) {
  std::int64_t lo = 0, hi = std::max<std::int64_t>(pool, 0);
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (mid >= std::min(pool, limit_cells(t, pool - mid, cell, pool)))
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

// The largest s with s <= limit(pool - s) - offset (XON while draining).
std::int64_t xon_point(const buffer_threshold& t, std::int64_t pool, std::int64_t offset, std::int64_t cell) {
  std::int64_t lo = 0, hi = std::max<std::int64_t>(pool, 0);
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    if (mid <= std::max<std::int64_t>(0, std::min(pool, limit_cells(t, pool - mid, cell, pool)) - offset))
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

std::string bytes_text(double b) {
  char s[48];
  if (std::abs(b) >= 1024.0 * 1024.0)
    std::snprintf(s, sizeof s, "%.2f MiB", b / 1024.0 / 1024.0);
  else if (std::abs(b) >= 1024.0)
    std::snprintf(s, sizeof s, "%.1f KiB", b / 1024.0);
  else
    std::snprintf(s, sizeof s, "%.0f B", b);
  return s;
}

qualify_check within(std::string name, std::string what, std::string unit, double measured, double expected,
                     double tolerance, std::string note = {}) {
  qualify_check c{std::move(name), std::move(what), std::move(unit), measured, expected, tolerance, false,
                  std::move(note)};
  c.pass = std::abs(measured - expected) <= tolerance;
  return c;
}

// A time that must fall in [expected, expected + late] (`early` more allowed before),
// measured as lying somewhere in [after, before] (no lower bound when `unbounded`). It
// fails only when the whole bracket is outside the window: a read's own delay is not the
// switch's. Measured is the bracket's middle, or its end when it has no start.
qualify_check time_window(std::string name, std::string what, std::int64_t expected, std::int64_t early,
                          std::int64_t late, std::int64_t after, std::int64_t before, bool unbounded,
                          std::string note) {
  const double measured = unbounded ? static_cast<double>(before) : (static_cast<double>(after) + before) / 2;
  qualify_check c{std::move(name), std::move(what), "ns", measured, static_cast<double>(expected),
                  static_cast<double>(late), false, std::move(note)};
  c.pass = before >= expected - early && (unbounded || after <= expected + late);
  if (before != after)
    c.note += "; read between " +
              (unbounded ? std::string("the start") : qualify_value_text(static_cast<double>(after), "ns")) +
              " and " + qualify_value_text(static_cast<double>(before), "ns");
  return c;
}

// One probe step's counters; a failed read ends the procedure with its error.
#define QUALIFY_READ(var, expr)            \
  auto var##_r = (expr);                   \
  if (!var##_r) return var##_r.error();    \
  const probe_counters var = *var##_r

struct context {
  switch_under_test& t;
  const fabric::switch_config& cfg;
  const qualify_plan& plan;
  qualify_result& out;
  std::int64_t frame_cell_bytes = 0;  // a probe frame as the buffer counts it
  std::uint32_t max_frames = 0;       // more frames than the buffer holds

  status cancelled() const {
    return plan.cancel_requested && plan.cancel_requested()
               ? status(error_code::cancelled, "qualification cancelled")
               : status::success();
  }
  // When pred(counters of the held queue) first held, counted from `t0` on the target's
  // clock, reading every `step` for at most `limit`. A read's counters are taken somewhere
  // between its call and its return, so the change lies after the previous read was
  // called and before this one returned: the bracket [after, before]. On a busy host a
  // read or a wake-up can take longer than a step; the bracket says so instead of
  // counting the delay against the switch.
  struct observed {
    bool seen = false;
    bool first_read = false;  // seen by the first read: no lower bound on when
    std::int64_t after_ns = 0, before_ns = 0;
    probe_counters at;
  };
  result<observed> time_until(const std::function<bool(const probe_counters&)>& pred, std::int64_t t0,
                              std::int64_t limit, std::int64_t step) {
    observed o;
    o.first_read = true;
    for (std::int64_t called = t.now_ns();; called = t.now_ns()) {
      ROCELAB_RETURN_IF_ERROR(cancelled());
      auto c = t.read(plan.src, plan.dst, plan.lossless_priority);
      if (!c) return c.error();
      o.before_ns = t.now_ns() - t0;
      if (pred(*c)) {
        o.seen = true;
        o.at = *c;
        return o;
      }
      o.after_ns = called - t0;
      o.first_read = false;
      if (o.before_ns > limit) return o;
      ROCELAB_RETURN_IF_ERROR(t.wait(step));
    }
  }

  // Frames from the plan's source; the switch must have received every one (a probe
  // that lost frames on the way in measures nothing).
  status send(std::uint16_t dst, std::uint8_t prio, std::uint32_t count, bool ect = false) {
    auto got = t.send({plan.src, dst, prio, count, plan.frame_bytes, ect});
    if (!got) return got.error();
    if (*got != count)
      return status(error_code::io_error, "the switch received " + std::to_string(*got) + " of " +
                                              std::to_string(count) + " probe frames for port " + std::to_string(dst));
    return status::success();
  }
};

// XOFF, headroom and XON of the lossless PG (src, priority), filling through a held dst.
status pfc_thresholds(context& x) {
  const auto& plan = x.plan;
  const std::uint8_t prio = plan.lossless_priority;
  const expected_thresholds exp = expected_for(x.cfg, plan.src, plan.dst, prio);
  const double frame = static_cast<double>(x.frame_cell_bytes);
  ROCELAB_RETURN_IF_ERROR(x.t.hold(plan.dst, prio));
  QUALIFY_READ(c0, x.t.read(plan.src, plan.dst, prio));

  std::int64_t xoff_at = -1;
  probe_counters last = c0;
  bool dropped_early = false;
  for (std::uint32_t i = 0; i < x.max_frames && xoff_at < 0; ++i) {
    ROCELAB_RETURN_IF_ERROR(x.send(plan.dst, prio, 1));
    QUALIFY_READ(c, x.t.read(plan.src, plan.dst, prio));
    last = c;
    if (c.pg_dropped + c.queue_dropped > c0.pg_dropped + c0.queue_dropped) {
      dropped_early = true;
      break;
    }
    if (c.pg_xoff_sent > c0.pg_xoff_sent) xoff_at = c.pg_used_bytes;
  }
  if (xoff_at < 0) {
    x.out.checks.push_back({"pfc.xoff_threshold", "PG occupancy when XOFF is sent", "bytes", -1,
                            static_cast<double>(exp.xoff_bytes), frame, false,
                            dropped_early ? "a frame was dropped before any XOFF: the priority is not lossless"
                                          : "no XOFF after filling more than the whole buffer"});
    return x.t.resume(plan.dst, prio);
  }
  x.out.checks.push_back(within("pfc.xoff_threshold", "PG occupancy when XOFF is sent", "bytes",
                                static_cast<double>(xoff_at), static_cast<double>(exp.xoff_bytes), frame,
                                "one frame at a time into a held port; reserve + alpha/(1+alpha) x ingress pool"));

  // Headroom: the sender ignores the pause; count what is absorbed until the first drop.
  std::int64_t headroom_max = last.pg_headroom_bytes;
  bool dropped = false, egress_drop = false;
  for (std::uint32_t i = 0; i < x.max_frames; ++i) {
    ROCELAB_RETURN_IF_ERROR(x.send(plan.dst, prio, 1));
    QUALIFY_READ(c, x.t.read(plan.src, plan.dst, prio));
    if (c.pg_dropped + c.queue_dropped > c0.pg_dropped + c0.queue_dropped) {
      dropped = true;
      egress_drop = c.queue_dropped > c0.queue_dropped;
      break;
    }
    headroom_max = std::max(headroom_max, c.pg_headroom_bytes);
  }
  x.out.checks.push_back(within(
      "pfc.headroom", "bytes absorbed after XOFF before the first drop", "bytes", static_cast<double>(headroom_max),
      static_cast<double>(exp.headroom_bytes), frame,
      !dropped ? "no drop after filling more than the buffer"
      : egress_drop ? "the egress queue limit dropped first (it should not bind on a lossless queue)"
                    : "the peer keeps sending after XOFF (PTF-style); the first drop ends the fill"));

  // XON: let packets go one at a time and watch for the XON frame.
  // A target that cannot let exactly one packet go (a lab's XON/XOFF pair) lets a few:
  // the XON point is then known to lie between the occupancy before and after the step
  // that brought it, and the tolerance widens by that step. A step too coarse to say
  // (more than 8 packets) is measured again from a fresh fill, up to three times.
  std::int64_t xon_at = -1, step_bytes = 0;
  std::uint32_t step_packets = 0;
  for (int attempt = 0; attempt < 3 && (xon_at < 0 || step_packets > 8); ++attempt) {
    if (attempt > 0) {  // refill past XOFF
      ROCELAB_RETURN_IF_ERROR(x.t.resume(plan.dst, prio));
      ROCELAB_RETURN_IF_ERROR(x.t.hold(plan.dst, prio));
      QUALIFY_READ(f0, x.t.read(plan.src, plan.dst, prio));
      for (std::uint32_t i = 0; i < x.max_frames; ++i) {
        ROCELAB_RETURN_IF_ERROR(x.send(plan.dst, prio, 1));
        QUALIFY_READ(f, x.t.read(plan.src, plan.dst, prio));
        if (f.pg_xoff_sent > f0.pg_xoff_sent) break;
      }
      ROCELAB_RETURN_IF_ERROR(x.send(plan.dst, prio, 4));
    }
    xon_at = -1;
    QUALIFY_READ(c1, x.t.read(plan.src, plan.dst, prio));
    std::int64_t before_step = c1.pg_used_bytes;
    for (std::uint32_t i = 0; i < x.max_frames && xon_at < 0; ++i) {
      ROCELAB_RETURN_IF_ERROR(x.cancelled());
      auto n = x.t.release(plan.dst, prio, 1);
      if (!n) return n.error();
      if (*n == 0) break;
      QUALIFY_READ(c, x.t.read(plan.src, plan.dst, prio));
      if (c.pg_xon_sent > c1.pg_xon_sent) {
        xon_at = c.pg_used_bytes;
        step_bytes = before_step - c.pg_used_bytes;
        step_packets = *n;
      }
      before_step = c.pg_used_bytes;
    }
  }
  if (xon_at < 0) {
    x.out.checks.push_back({"pfc.xon_threshold", "PG occupancy when XON is sent", "bytes", -1,
                            static_cast<double>(exp.xon_bytes), frame, false, "no XON while the queue drained"});
  } else {
    // The XON point lies in [after, before] of its step: expected within a frame of that.
    const double after = static_cast<double>(xon_at), before = after + static_cast<double>(step_bytes);
    const auto e = static_cast<double>(exp.xon_bytes);
    qualify_check c{"pfc.xon_threshold", "PG occupancy when XON is sent", "bytes", after, e,
                    frame + static_cast<double>(std::max<std::int64_t>(0, step_bytes)), false,
                    "draining " + std::string(step_packets > 1 ? "a few packets" : "one packet") +
                        " at a time (the step that brought XON let " + std::to_string(step_packets) +
                        " go); the XOFF limit minus xon_offset (or xon)"};
    c.pass = e >= after - frame && e <= before + frame;
    if (step_packets > 8) {  // too coarse to say where XON is
      c.pass = false;
      c.note = "inconclusive: the step that brought XON let " + std::to_string(step_packets) +
               " packets go at once (the target could not release them a few at a time)";
    }
    x.out.checks.push_back(std::move(c));
  }
  return x.t.resume(plan.dst, prio);
}

// The shared-buffer limit of a lossy priority: fill a held queue until the first drop.
status shared_limit(context& x, std::uint8_t prio) {
  const auto& plan = x.plan;
  const expected_thresholds exp = expected_for(x.cfg, plan.src, plan.dst, prio);
  const bool ingress_binds = exp.ingress_limit_bytes <= exp.egress_limit_bytes;
  const double expected = static_cast<double>(std::min(exp.ingress_limit_bytes, exp.egress_limit_bytes));
  ROCELAB_RETURN_IF_ERROR(x.t.hold(plan.dst, prio));
  QUALIFY_READ(c0, x.t.read(plan.src, plan.dst, prio));
  std::uint32_t accepted = 0;
  bool dropped = false, by_egress = false;
  for (std::uint32_t i = 0; i < x.max_frames; ++i) {
    ROCELAB_RETURN_IF_ERROR(x.send(plan.dst, prio, 1));
    QUALIFY_READ(c, x.t.read(plan.src, plan.dst, prio));
    if (c.pg_dropped + c.queue_dropped > c0.pg_dropped + c0.queue_dropped) {
      dropped = true;
      by_egress = c.queue_dropped > c0.queue_dropped;
      break;
    }
    ++accepted;
  }
  std::string note = std::string("expected the ") + (ingress_binds ? "ingress PG" : "egress queue") +
                     " limit to bind (ingress " + bytes_text(static_cast<double>(exp.ingress_limit_bytes)) +
                     ", egress " + bytes_text(static_cast<double>(exp.egress_limit_bytes)) + ")";
  if (!dropped)
    note += "; no drop after filling more than the buffer";
  else if (by_egress == ingress_binds)
    note += std::string("; but the ") + (by_egress ? "egress queue" : "ingress PG") + " dropped";
  auto check = within("buffer.shared_limit.queue" + std::to_string(prio),
                      "bytes a lossy priority holds before its first drop", "bytes",
                      static_cast<double>(accepted) * static_cast<double>(x.frame_cell_bytes), expected,
                      static_cast<double>(x.frame_cell_bytes), note);
  check.pass = check.pass && dropped;
  x.out.checks.push_back(std::move(check));
  return x.t.resume(plan.dst, prio);
}

// Marking probability against queue depth, repeated fills per depth.
status ecn_curve(context& x) {
  const auto& plan = x.plan;
  const std::uint8_t prio = plan.lossless_priority;
  const fabric::ecn_config& ecn = x.cfg.ports[plan.dst].queues[prio].ecn;
  x.out.ecn = ecn;
  x.out.ecn_on_dequeue = x.cfg.ecn_mark_on_dequeue;
  if (!ecn.enabled) {
    x.out.checks.push_back({"ecn.curve", "marking probability against queue depth", "points", 0, 0, 0, true,
                            "ECN is off on queue " + std::to_string(prio) + " of port " + std::to_string(plan.dst) +
                                ": nothing to measure"});
    return status::success();
  }
  const auto frame = static_cast<std::int64_t>(plan.frame_bytes);
  // One point below Kmin, the rest spread between Kmin and Kmax, one above Kmax; each a
  // whole number of frames (the depth a probe sees).
  std::vector<std::int64_t> depths;
  const std::uint32_t inner = std::max<std::uint32_t>(plan.ecn_points, 3) - 2;
  depths.push_back(std::max<std::int64_t>(0, ecn.kmin_bytes - 2 * frame));
  for (std::uint32_t i = 1; i <= inner; ++i)
    depths.push_back(ecn.kmin_bytes + (ecn.kmax_bytes - ecn.kmin_bytes) * static_cast<std::int64_t>(i) /
                                          static_cast<std::int64_t>(inner + 1));
  depths.push_back(ecn.kmax_bytes + 2 * frame);
  std::uint32_t passed = 0;
  for (std::int64_t target : depths) {
    const auto fills = static_cast<std::uint32_t>(std::max<std::int64_t>(0, (target + frame / 2) / frame));
    ecn_point pt;
    pt.depth_bytes = static_cast<std::int64_t>(fills) * frame;
    for (std::uint32_t s = 0; s < plan.ecn_samples; ++s) {
      ROCELAB_RETURN_IF_ERROR(x.cancelled());
      ROCELAB_RETURN_IF_ERROR(x.t.hold(plan.dst, prio));
      QUALIFY_READ(c0, x.t.read(plan.src, plan.dst, prio));
      // At enqueue the probe sees the fill ahead of it; at dequeue it leaves first and
      // sees the fill behind it.
      if (x.cfg.ecn_mark_on_dequeue) ROCELAB_RETURN_IF_ERROR(x.send(plan.dst, prio, 1, true));
      if (fills > 0) ROCELAB_RETURN_IF_ERROR(x.send(plan.dst, prio, fills));
      if (!x.cfg.ecn_mark_on_dequeue) ROCELAB_RETURN_IF_ERROR(x.send(plan.dst, prio, 1, true));
      QUALIFY_READ(held, x.t.read(plan.src, plan.dst, prio));
      ROCELAB_RETURN_IF_ERROR(x.t.resume(plan.dst, prio));
      QUALIFY_READ(c1, x.t.read(plan.src, plan.dst, prio));
      if (held.pg_dropped + held.queue_dropped > c0.pg_dropped + c0.queue_dropped) {
        pt.note = "the fill to " + bytes_text(static_cast<double>(pt.depth_bytes)) +
                  " dropped packets: the buffer cannot hold this depth";
        break;
      }
      ++pt.samples;
      pt.marked += c1.queue_ecn_marked > c0.queue_ecn_marked ? 1 : 0;
    }
    pt.expected = expected_marking(ecn, pt.depth_bytes);
    if (pt.samples > 0) {
      pt.measured = static_cast<double>(pt.marked) / pt.samples;
      std::tie(pt.ci_low, pt.ci_high) = wilson_interval(pt.marked, pt.samples);
      // Within the interval, or within one sample's worth of it (the boundary cases 0 and 1).
      pt.pass = pt.note.empty() && pt.samples == plan.ecn_samples && pt.expected >= pt.ci_low - 1e-12 &&
                pt.expected <= pt.ci_high + 1e-12;
    }
    passed += pt.pass ? 1 : 0;
    x.out.ecn_curve.push_back(std::move(pt));
  }
  char note[160];
  std::snprintf(note, sizeof note, "%u fills per depth; Kmin %s, Kmax %s, Pmax %.3g, marking at %s", plan.ecn_samples,
                bytes_text(static_cast<double>(ecn.kmin_bytes)).c_str(),
                bytes_text(static_cast<double>(ecn.kmax_bytes)).c_str(), ecn.pmax,
                x.cfg.ecn_mark_on_dequeue ? "dequeue" : "enqueue");
  qualify_check c{"ecn.curve", "depth points whose configured probability is in the measured 99.9% interval",
                  "points", static_cast<double>(passed), static_cast<double>(depths.size()), 0, false, note};
  c.pass = passed == depths.size();
  x.out.checks.push_back(std::move(c));
  return status::success();
}

// A PFC storm on the held port, and the watchdog's reaction.
status watchdog_storm(context& x) {
  const auto& plan = x.plan;
  const std::uint8_t prio = plan.lossless_priority;
  const fabric::pfc_watchdog_config& wd = x.cfg.pfc.watchdog;
  if (!wd.enabled) {
    x.out.checks.push_back({"pfc_watchdog.enabled", "PFC watchdog configured", "", 0, 1, 0, false,
                            "no PFC watchdog: a peer stuck sending XOFF would stall this priority, and the "
                            "pauses would spread upstream"});
    return status::success();
  }
  ROCELAB_RETURN_IF_ERROR(x.t.configure(x.cfg));  // with its watchdog now
  const std::int64_t poll = wd.poll_ns > 0 ? wd.poll_ns : std::max<std::int64_t>(1, wd.detection_ns / 4);
  const std::int64_t step = std::max<std::int64_t>(1, poll / 8);
  const auto queued = 8u;
  // The watchdog sees a queue stuck at its first poll after the packets queue and counts
  // whole polls from there (SONiC counts down the detection time a poll at a time): a
  // detection time that is not a whole number of polls is rounded up to one.
  const std::int64_t detect_late = (wd.detection_ns + poll - 1) / poll * poll - wd.detection_ns + poll;

  // The clock starts once packets wait behind the storm: from then the queue is stuck.
  // Their first frame arrives after `queueing` and the last before send() returns.
  ROCELAB_RETURN_IF_ERROR(x.t.storm(plan.dst, prio, true));
  const std::int64_t queueing = x.t.now_ns();
  ROCELAB_RETURN_IF_ERROR(x.send(plan.dst, prio, queued));
  const std::int64_t queued_by = x.t.now_ns() - queueing;
  auto detected = x.time_until([](const probe_counters& c) { return c.wd_storms_detected > 0; }, queueing,
                                3 * (wd.detection_ns + poll), step);
  if (!detected) return detected.error();
  if (detected->seen) {
    // From the queue's first packet: the bracket starts `queued_by` earlier.
    x.out.checks.push_back(time_window(
        "pfc_watchdog.detection", "time from the storm's start to its detection", wd.detection_ns, 0, detect_late,
        detected->after_ns - queued_by, detected->before_ns, detected->first_read,
        "within [detection, detection + poll] (in whole polls) of the first packet queued behind the storm (" +
            std::to_string(queued) + " packets)"));
  } else {
    x.out.checks.push_back({"pfc_watchdog.detection", "time from the storm's start to its detection", "ns", -1,
                            static_cast<double>(wd.detection_ns), static_cast<double>(detect_late), false,
                            "no storm detected within 3 x (detection + poll)"});
    ROCELAB_RETURN_IF_ERROR(x.t.storm(plan.dst, prio, false));
    return x.t.resume(plan.dst, prio);
  }

  // The action on the queued packets and on new ones.
  ROCELAB_RETURN_IF_ERROR(x.t.wait(step));
  // configure() zeroed the counters: what they hold now is the storm's.
  ROCELAB_RETURN_IF_ERROR(x.send(plan.dst, prio, 4));
  ROCELAB_RETURN_IF_ERROR(x.t.wait(step));
  QUALIFY_READ(a1, x.t.read(plan.src, plan.dst, prio));
  using action = fabric::pfc_watchdog_config::action_kind;
  switch (wd.action) {
    case action::drop:
      x.out.checks.push_back(within("pfc_watchdog.action", "packets dropped by the watchdog (drop action)",
                                    "packets", static_cast<double>(a1.wd_dropped), queued + 4.0, 0,
                                    "the queued packets and four sent during the storm"));
      break;
    case action::forward:
      x.out.checks.push_back(within("pfc_watchdog.action", "packets sent through the pause (forward action)",
                                    "packets", static_cast<double>(a1.queue_tx_packets), queued + 4.0, 0,
                                    "the queued packets and four sent during the storm"));
      break;
    case action::alert:
      x.out.checks.push_back(within("pfc_watchdog.action", "packets left alone (alert action)", "packets",
                                    static_cast<double>(a1.wd_dropped + a1.queue_tx_packets), 0, 0,
                                    "alert only counts the storm"));
      break;
  }
  // A flow through another port is unaffected by the storm.
  QUALIFY_READ(b0, x.t.read(plan.src, plan.other, prio));
  ROCELAB_RETURN_IF_ERROR(x.send(plan.other, prio, 8));
  ROCELAB_RETURN_IF_ERROR(x.t.wait(step));
  QUALIFY_READ(b1, x.t.read(plan.src, plan.other, prio));
  x.out.checks.push_back(within("pfc_watchdog.bystander", "packets to another port sent during the storm", "packets",
                                static_cast<double>(b1.queue_tx_packets - b0.queue_tx_packets), 8, 0,
                                "same priority, same ingress port, port " + std::to_string(plan.other)));

  // Restoration once the storm stops.
  ROCELAB_RETURN_IF_ERROR(x.t.storm(plan.dst, prio, false));
  const std::int64_t storm_end = x.t.now_ns();
  auto restored = x.time_until([](const probe_counters& c) { return c.wd_storms_restored > 0; }, storm_end,
                               3 * (wd.restoration_ns + poll), step);
  if (!restored) return restored.error();
  const char* what = "time from the storm's last XOFF to restoration";
  if (!restored->seen) {
    x.out.checks.push_back({"pfc_watchdog.restoration", what, "ns", -1, static_cast<double>(wd.restoration_ns),
                            static_cast<double>(poll), false, "not restored within 3 x (restoration + poll)"});
  } else if (const probe_counters& c = restored->at; c.wd_last_xoff_rx_ns >= 0 && c.wd_last_restored_ns >= 0) {
    // The switch's own clock, from the XOFF it last received: exact.
    const std::int64_t took = c.wd_last_restored_ns - c.wd_last_xoff_rx_ns;
    x.out.checks.push_back(time_window("pfc_watchdog.restoration", what, wd.restoration_ns, 0, poll, took, took,
                                       false,
                                       "within [restoration, restoration + poll] of the last XOFF, on the "
                                       "switch's clock"));
  } else {
    // Only our clock: the last XOFF went out at most one refresh before the storm's end,
    // which a poll covers.
    x.out.checks.push_back(time_window("pfc_watchdog.restoration", what, wd.restoration_ns, poll, poll,
                                       restored->after_ns, restored->before_ns, restored->first_read,
                                       "within [restoration - poll, restoration + poll] of the storm's end "
                                       "(the switch reports no timestamps)"));
  }

  // Lossless again: held packets wait instead of being dropped.
  ROCELAB_RETURN_IF_ERROR(x.t.hold(plan.dst, prio));
  QUALIFY_READ(l0, x.t.read(plan.src, plan.dst, prio));
  ROCELAB_RETURN_IF_ERROR(x.send(plan.dst, prio, 4));
  ROCELAB_RETURN_IF_ERROR(x.t.resume(plan.dst, prio));
  QUALIFY_READ(l1, x.t.read(plan.src, plan.dst, prio));
  x.out.checks.push_back(within("pfc_watchdog.lossless_after", "packets held then sent after restoration", "packets",
                                static_cast<double>(l1.queue_tx_packets - l0.queue_tx_packets), 4, 0,
                                l1.wd_dropped != l0.wd_dropped ? "the watchdog still dropped some" : ""));
  return status::success();
}

#undef QUALIFY_READ

status check_plan(const fabric::switch_config& cfg, const qualify_plan& plan) {
  const auto n = cfg.ports.size();
  for (auto [name, port] : {std::pair{"src", plan.src}, std::pair{"dst", plan.dst}, std::pair{"other", plan.other}})
    if (port >= n)
      return status(error_code::invalid_argument, std::string("qualify: ") + name + " port " + std::to_string(port) +
                                                      " outside the switch's " + std::to_string(n) + " ports");
  if (plan.src == plan.dst || plan.src == plan.other || plan.dst == plan.other)
    return status(error_code::invalid_argument, "qualify: src, dst and other must be three different ports");
  if (plan.lossless_priority > 7 || ((cfg.lossless_priorities >> plan.lossless_priority) & 1u) == 0)
    return status(error_code::invalid_argument, "qualify: priority " + std::to_string(plan.lossless_priority) +
                                                    " is not lossless in this configuration (PFC off?)");
  for (auto p : plan.lossy_priorities)
    if (p > 7 || ((cfg.lossless_priorities >> p) & 1u) != 0)
      return status(error_code::invalid_argument,
                    "qualify: lossy priority " + std::to_string(p) + " is lossless (or outside 0..7)");
  if (plan.frame_bytes < 64 || plan.frame_bytes > 9216)
    return status(error_code::invalid_argument, "qualify: frame_bytes outside 64..9216");
  if (plan.ecn_samples == 0) return status(error_code::invalid_argument, "qualify: ecn_samples must be > 0");
  return status::success();
}

}  // namespace

bool qualify_result::passed() const {
  return std::all_of(checks.begin(), checks.end(), [](const qualify_check& c) { return c.pass; });
}

expected_thresholds expected_for(const fabric::switch_config& cfg, std::uint16_t src, std::uint16_t dst,
                                 std::uint8_t priority) {
  const std::int64_t cell = std::max<std::int64_t>(1, cfg.cell_bytes);
  const std::int64_t total = cfg.buffer_bytes / cell;
  std::int64_t ingress_reserved = 0, egress_reserved = 0;
  for (const auto& port : cfg.ports)
    for (int p = 0; p < fabric::num_priorities; ++p) {
      ingress_reserved += cells_up(port.pgs[static_cast<std::size_t>(p)].reserve_bytes, cell);
      if ((cfg.lossless_priorities >> p) & 1u)
        ingress_reserved += cells_up(port.pgs[static_cast<std::size_t>(p)].headroom_bytes, cell);
      egress_reserved += cells_up(port.queues[static_cast<std::size_t>(p)].reserve_bytes, cell);
    }
  const std::int64_t pool_in = total - ingress_reserved, pool_out = total - egress_reserved;
  const fabric::pg_config& pg = cfg.ports.at(src).pgs.at(priority);
  const fabric::queue_config& q = cfg.ports.at(dst).queues.at(priority);
  const std::int64_t pg_reserve = cells_up(pg.reserve_bytes, cell);
  expected_thresholds e;
  e.xoff_bytes = (pg_reserve + meeting_point(pg.shared, pool_in, cell)) * cell;
  e.headroom_bytes = cells_up(pg.headroom_bytes, cell) * cell;
  const std::int64_t xon_shared = pg.xon_bytes >= 0 ? pg.xon_bytes / cell
                                                    : xon_point(pg.shared, pool_in, cells_up(pg.xon_offset_bytes, cell), cell);
  e.xon_bytes = (pg_reserve + xon_shared) * cell;
  // A lossy fill stops where the next frame would pass the limit: at the meeting point.
  e.ingress_limit_bytes = (pg_reserve + meeting_point(pg.shared, pool_in, cell)) * cell;
  e.egress_limit_bytes = (cells_up(q.reserve_bytes, cell) + meeting_point(q.shared, pool_out, cell)) * cell;
  return e;
}

double expected_marking(const fabric::ecn_config& ecn, std::int64_t depth_bytes) {
  if (!ecn.enabled || depth_bytes <= ecn.kmin_bytes) return 0.0;
  if (depth_bytes > ecn.kmax_bytes) return 1.0;
  return ecn.pmax * static_cast<double>(depth_bytes - ecn.kmin_bytes) /
         static_cast<double>(std::max<std::int64_t>(1, ecn.kmax_bytes - ecn.kmin_bytes));
}

std::pair<double, double> wilson_interval(std::uint32_t k, std::uint32_t n, double z) {
  if (n == 0) return {0.0, 1.0};
  const double nn = n, p = k / nn, z2 = z * z;
  const double centre = (p + z2 / (2 * nn)) / (1 + z2 / nn);
  const double half = z * std::sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn)) / (1 + z2 / nn);
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

result<qualify_result> qualify_switch(switch_under_test& target, const fabric::switch_config& cfg,
                                      const qualify_plan& plan) {
  ROCELAB_RETURN_IF_ERROR(fabric::validate(cfg));
  ROCELAB_RETURN_IF_ERROR(check_plan(cfg, plan));
  qualify_result out;
  out.target = target.describe();
  const std::int64_t cell = std::max<std::int64_t>(1, cfg.cell_bytes);
  context x{target, cfg, plan, out};
  x.frame_cell_bytes = cells_up(plan.frame_bytes, cell) * cell;
  x.max_frames = static_cast<std::uint32_t>(
      std::min<std::int64_t>(cfg.buffer_bytes / x.frame_cell_bytes + 16, std::numeric_limits<std::uint32_t>::max()));

  // Buffer and ECN checks with the watchdog off: a long hold would look like a storm.
  fabric::switch_config quiet = cfg;
  quiet.pfc.watchdog.enabled = false;
  const std::size_t steps = 2 + plan.lossy_priorities.size() + (plan.watchdog ? 1 : 0);
  std::size_t step = 0;
  const auto starting = [&](const std::string& what) {
    if (plan.on_step) plan.on_step(++step, steps, what);
  };
  status st = target.configure(quiet);
  if (st.ok()) {
    starting("PFC XOFF/XON thresholds");
    st = pfc_thresholds(x);
  }
  for (auto p : plan.lossy_priorities)
    if (st.ok()) {
      starting("shared limit of priority " + std::to_string(p));
      st = shared_limit(x, p);
    }
  if (st.ok()) {
    starting("ECN marking curve");
    st = ecn_curve(x);
  }
  if (st.ok() && plan.watchdog) {
    starting("PFC watchdog storm");
    st = watchdog_storm(x);
  }
  const status restored = target.restore();
  if (!st.ok()) return st.with_context("qualifying " + out.target);
  if (!restored.ok()) return restored.with_context("restoring " + out.target);
  return out;
}

}  // namespace rocelab::experiments
