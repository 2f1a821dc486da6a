// Buffer validation (buffers.hpp): headroom arithmetic per profile, and two searches on
// the twin (lossless incast degree, buffer for a p99 target).
#include "rocelab/experiments/buffers/buffers.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "rocelab/experiments/report/svg.hpp"
#include "rocelab/fabric/headroom.hpp"
#include "rocelab/fabric/twin/frames.hpp"
#include "rocelab/experiments/run/runner.hpp"
#include "rocelab/experiments/run/summary.hpp"

namespace rocelab::experiments {
namespace {

std::uint32_t lossless_pgs(const experiment_spec& spec) {
  // The spec's lossless priorities; a profile is validated for at least one.
  return std::max<std::uint32_t>(1, static_cast<std::uint32_t>(spec.sw.pfc.priorities.size()));
}

std::int64_t cells_down(std::int64_t bytes, std::int64_t cell) { return cell > 0 ? bytes / cell * cell : bytes; }

// Bytes of headroom the ports outside the run hold (the run's own ports reserve theirs
// in the twin's MMU): per_port, each holds its own; shared, what the pool holds beyond
// the run's ports.
std::int64_t others_reserve(const headroom_figures& h, std::uint32_t run_ports) {
  const std::int64_t per_port = h.per_pg_bytes * h.lossless_pgs;
  const std::int64_t own = per_port * run_ports;
  return std::max<std::int64_t>(0, h.reserved_bytes - own);
}

struct probe_outcome {
  buffer_probe probe;
  bool lossless = false;
};

// `spec` with the seeds a probe pools: at least settings.seeds_per_probe, more when the
// spec's repeats ask for more.
experiment_spec pooled(experiment_spec spec, const buffers_settings& settings) {
  spec.repeats = std::max(spec.repeats, settings.seeds_per_probe);
  return spec;
}

result<probe_outcome> run_probe(const experiment_spec& probe_spec, const std::string& search,
                                const buffers_settings& settings) {
  const experiment_spec spec = pooled(probe_spec, settings);
  probe_outcome out;
  out.probe.search = search;
  out.probe.buffer_bytes = spec.sw.buffer_bytes;
  out.probe.degree = spec.workload.incast.enabled ? spec.workload.incast.senders : 0;
  out.probe.pfc = spec.sw.pfc.enabled;
  result<experiment_result> ran = status(error_code::internal, "not run");
  if (settings.runner) {
    auto remote = settings.runner(spec);
    if (!remote.ok()) return std::move(remote).error();
    ran = experiment_result{std::move(remote->seeds), std::move(remote->repeats)};
  } else {
    ran = run_experiment(spec, {}, settings.cancel_requested);
  }
  if (!ran.ok()) return std::move(ran).error();
  if (settings.cancel_requested && settings.cancel_requested())
    return status(error_code::cancelled, "rocelab buffers: cancelled");
  if (ran->repeats.size() < settings.seeds_per_probe)
    return status(error_code::internal, "rocelab buffers: a probe returned " + std::to_string(ran->repeats.size()) +
                                            " runs for " + std::to_string(spec.repeats) + " seeds");
  std::vector<const run_records*> runs;
  for (const auto& r : ran->repeats) {
    runs.push_back(&r);
    for (const auto& c : r.counters)
      if (c.name == "drops_headroom_exhausted") out.probe.headroom_drops += c.value;
  }
  const run_summary s = summarize(runs, ran->seeds);
  out.probe.seeds = static_cast<std::uint32_t>(runs.size());
  out.probe.drops = s.drops;
  out.probe.pause_frames = s.pause_frames;
  out.probe.fct_p99_ns = s.all.fct_p99_ns;
  out.probe.complete = s.all.completed == s.all.flows;
  out.lossless = s.drops == 0 && out.probe.complete;
  return out;
}

// Sizes for people, as every report prints them (B, KiB, MiB).
std::string kib_text(std::int64_t bytes) { return svg::readable_bytes(static_cast<double>(bytes)); }

// The incast alone with `degree` senders into host 0.
experiment_spec incast_with(const experiment_spec& on_profile, std::uint32_t degree, bool pfc) {
  experiment_spec s = on_profile;
  s.workload.allreduce.enabled = false;
  s.workload.background.enabled = false;
  s.workload.incast.enabled = true;
  s.workload.incast.receiver = 0;
  s.workload.incast.sender_hosts.clear();
  s.workload.incast.senders = degree;
  s.topology.type = "single_switch";
  s.topology.hosts = degree + 1;
  s.sw.pfc.enabled = pfc;
  return s;
}

}  // namespace

const char* to_string(target_outcome o) {
  switch (o) {
    case target_outcome::not_searched: return "not_searched";
    case target_outcome::met: return "met";
    case target_outcome::at_most: return "at_most";
    case target_outcome::not_reachable: return "not_reachable";
    case target_outcome::headroom_shortfall: return "headroom_shortfall";
  }
  return "not_searched";
}

std::string target_text(const profile_buffers& p) {
  switch (p.target) {
    case target_outcome::not_searched: return "-";
    case target_outcome::met: return kib_text(p.buffer_for_target_bytes);
    case target_outcome::at_most: return "at most " + kib_text(p.buffer_for_target_bytes);
    case target_outcome::not_reachable: return "not reachable";
    case target_outcome::headroom_shortfall: return "headroom shortfall";
  }
  return "-";
}

std::string shortfall_text(const profile_buffers& p) {
  if (p.shortfalls.empty()) return {};
  std::string runs;
  for (const buffer_probe& q : p.shortfalls) {
    if (!runs.empty()) runs += "; ";
    runs += q.search == "buffer_for_target" ? "buffer " + kib_text(q.buffer_bytes)
                                            : std::to_string(q.degree) + "-to-1 incast";
    runs += ": " + std::to_string(q.drops) + " drops (" + std::to_string(q.headroom_drops) +
            " headroom exhausted) over " + std::to_string(q.seeds) + " seeds";
  }
  const headroom_figures& h = p.headroom;
  return "headroom shortfall, PFC on and packets dropped (" + runs + "); headroom per port and PG " +
         kib_text(h.per_pg_bytes) + " (cable " + kib_text(h.cable_bytes) + ", MTUs " + kib_text(h.mtu_bytes) +
         ", response " + kib_text(h.response_bytes) + ", PFC frame " + std::to_string(h.pfc_frame_bytes) +
         " B), " + kib_text(h.reserved_bytes) + " reserved: no buffer size is read from these runs; check the "
         "profile's cable_m and peer_response_ns and the switch's XOFF point (rocelab qualify)";
}

std::string target_rule_text(std::uint32_t seeds_per_probe) {
  return "pooled p99 FCT over " + std::to_string(seeds_per_probe) +
         " seeds per probe; the answer is the smallest probed buffer at and above which every probed size meets "
         "the target (the pooled p99 made monotone over buffer size); a run that dropped with PFC on is a headroom "
         "shortfall, never an answer";
}

headroom_figures profile_headroom(const fabric_profile_file& profile, const experiment_spec& spec) {
  const fabric::switch_profile& p = profile.sw;
  fabric::headroom_inputs in;
  in.rate_bps = static_cast<std::int64_t>(p.port_gbps * 1e9);
  in.cable_m = p.cable_m;
  in.mtu_bytes = fabric::twin::roce_max_frame_bytes(spec.nic.mtu_bytes);
  // The response time in pause quanta (512 bit times at the port's speed), rounded up.
  in.peer_response_quanta = static_cast<std::int64_t>(
      std::ceil(static_cast<double>(p.peer_response_ns) * p.port_gbps / fabric::pause_quantum_bits));
  const fabric::headroom_breakdown b = fabric::headroom_calculator(in);
  headroom_figures h;
  h.per_pg_bytes = b.total_bytes;
  h.cable_bytes = b.cable_bytes;
  h.mtu_bytes = b.mtu_bytes;
  h.response_bytes = b.response_bytes;
  h.phy_bytes = b.phy_bytes;
  h.pfc_frame_bytes = b.pfc_frame;
  h.lossless_pgs = lossless_pgs(spec);
  const double all = static_cast<double>(h.per_pg_bytes) * h.lossless_pgs * p.ports;
  h.reserved_bytes = static_cast<std::int64_t>(std::ceil(p.headroom_shared ? all / p.headroom_oversubscription : all));
  h.reserved_share = p.buffer_bytes > 0 ? static_cast<double>(h.reserved_bytes) / static_cast<double>(p.buffer_bytes) : 0;
  h.shared_bytes = std::max<std::int64_t>(0, p.buffer_bytes - h.reserved_bytes);
  return h;
}

result<experiment_spec> spec_on_profile(const experiment_spec& spec, const fabric_profile_file& profile) {
  const fabric::switch_profile& p = profile.sw;
  if (p.link != fabric::link_layer::roce)
    return status(error_code::invalid_argument,
                  "profile " + p.name + ": buffer validation is for RoCE switches (PFC headroom, shared buffer)");
  experiment_spec s = spec;
  s.backend = "twin";
  if (s.topology.type == "single_switch" && s.topology.hosts > p.ports)
    return status(error_code::invalid_argument, "profile " + p.name + ": the spec has " +
                                                    std::to_string(s.topology.hosts) + " hosts on one switch of " +
                                                    std::to_string(p.ports) + " ports");
  const headroom_figures h = profile_headroom(profile, spec);
  s.topology.link_gbps = p.port_gbps;
  s.topology.link_delay_ns = static_cast<std::int64_t>(std::llround(p.cable_m * fabric::propagation_ns_per_m));
  s.sw.cell_bytes = p.cell_bytes;
  s.sw.dynamic_th = static_cast<std::int32_t>(std::lround(std::log2(p.alpha)));
  s.sw.pfc.headroom_bytes = h.per_pg_bytes;
  s.sw.pfc.cable_m = p.cable_m;
  s.fabric.switch_latency_ns = p.port_to_port_latency_ns;
  const std::uint32_t run_ports = s.topology.type == "single_switch" ? s.topology.hosts : p.ports;
  s.sw.buffer_bytes = cells_down(p.buffer_bytes - others_reserve(h, run_ports), p.cell_bytes);
  // The run's own ports reserve their headroom inside the twin's MMU: what is left of the
  // buffer must hold that and some shared buffer.
  const std::int64_t own = h.per_pg_bytes * h.lossless_pgs * run_ports;
  if (s.sw.buffer_bytes <= own + own / 8)
    return status(error_code::invalid_argument,
                  "profile " + p.name + ": its headroom reserve (" + std::to_string(h.reserved_bytes) +
                      " B) leaves too little of the buffer (" + std::to_string(p.buffer_bytes) + " B)");
  return s;
}

std::uint32_t buffers_steps(std::size_t profiles, const buffers_settings& settings) {
  return static_cast<std::uint32_t>(profiles) * (settings.p99_target_ns > 0 ? 3 : 2);
}

result<buffers_result> validate_buffers(const experiment_spec& spec, const std::vector<fabric_profile_file>& profiles,
                                        const buffers_settings& settings,
                                        const std::function<void(const std::string&)>& progress) {
  ROCELAB_RETURN_IF_ERROR(validate(spec));
  if (!spec.workload.incast.enabled)
    return status(error_code::invalid_argument,
                  "rocelab buffers: the spec needs an incast workload (workload.incast) for the lossless degree search");
  if (profiles.empty()) return status(error_code::invalid_argument, "rocelab buffers: no switch profile given");
  if (!(settings.max_buffer_factor >= 1) || !(settings.buffer_tolerance > 0) || settings.grid_steps_per_octave == 0)
    return status(error_code::invalid_argument,
                  "rocelab buffers: max_buffer_factor >= 1, buffer_tolerance > 0 and grid_steps_per_octave >= 1");
  if (settings.seeds_per_probe < 3)
    return status(error_code::invalid_argument, "rocelab buffers: seeds_per_probe is " +
                                                    std::to_string(settings.seeds_per_probe) +
                                                    "; a probe pools at least 3 seeds, one seed is no answer");
  const std::uint32_t steps = buffers_steps(profiles.size(), settings);
  std::uint32_t step = 0;
  buffers_result out;
  out.spec_name = spec.name;
  out.incast_flow_bytes = static_cast<std::uint32_t>(spec.workload.incast.flow_bytes);
  out.p99_target_ns = settings.p99_target_ns;
  out.seeds_per_probe = std::max(spec.repeats, settings.seeds_per_probe);
  out.target_rule = target_rule_text(out.seeds_per_probe);

  for (const fabric_profile_file& profile : profiles) {
    const std::string& name = profile.sw.name;
    auto say = [&](const std::string& line) {
      if (progress) progress("step " + std::to_string(step) + " of " + std::to_string(steps) + ": " + name + ": " + line);
    };
    profile_buffers pb;
    pb.profile = name;
    pb.path = profile.path;
    pb.port_gbps = profile.sw.port_gbps;
    pb.ports = profile.sw.ports;
    pb.buffer_bytes = profile.sw.buffer_bytes;
    pb.buffer_per_port_bytes = profile.sw.buffer_bytes / std::max<std::uint32_t>(1, profile.sw.ports);
    pb.headroom = profile_headroom(profile, spec);

    // Lossless incast degree, with and without PFC. Loss grows with the fan-in, so the
    // largest loss-free degree is found by bisection between 1 and the radix minus one.
    const std::uint32_t top = std::min<std::uint32_t>(profile.sw.ports - 1,
                                                       settings.max_degree > 0 ? settings.max_degree : profile.sw.ports - 1);
    pb.max_degree_searched = top;
    for (const bool pfc : {true, false}) {
      ++step;
      const std::string search = pfc ? "degree_pfc" : "degree_no_pfc";
      auto lossless_at = [&](std::uint32_t n) -> result<bool> {
        auto on = spec_on_profile(incast_with(spec, n, pfc), profile);
        if (!on.ok()) return std::move(on).error();
        auto p = run_probe(*on, search, settings);
        if (!p.ok()) return std::move(p).error().with_context(name + ", " + std::to_string(n) + "-to-1 incast");
        say(std::string(pfc ? "PFC on" : "PFC off") + ", " + std::to_string(n) + "-to-1: " +
            std::to_string(p->probe.drops) + " drops");
        pb.probes.push_back(p->probe);
        if (p->probe.headroom_shortfall()) pb.shortfalls.push_back(p->probe);
        if (pfc && n == top) pb.pauses_at_max_degree = p->probe.pause_frames;
        return p->lossless;
      };
      std::uint32_t found = 0;
      auto at_top = lossless_at(top);
      if (!at_top.ok()) return std::move(at_top).error();
      if (*at_top) {
        found = top;
      } else {
        std::uint32_t lo = 0, hi = top;  // lossless(lo) (0: trivially), !lossless(hi)
        while (hi - lo > 1) {
          const std::uint32_t mid = lo + (hi - lo) / 2;
          auto ok = lossless_at(mid);
          if (!ok.ok()) return std::move(ok).error();
          (*ok ? lo : hi) = mid;
        }
        found = lo;
      }
      (pfc ? pb.lossless_degree_pfc : pb.lossless_degree_no_pfc) = found;
    }

    // The buffer for the p99 target: down a log grid from the top until a size misses,
    // then bisection between that miss and the last size that met (buffers.hpp). Every
    // probed size above the answer met the target; a PFC-on drop ends the search.
    if (settings.p99_target_ns > 0) {
      ++step;
      struct sized_probe {
        bool meets = false;
        bool shortfall = false;
        std::int64_t p99_ns = 0;
      };
      auto probe_at = [&](std::int64_t buffer) -> result<sized_probe> {
        fabric_profile_file sized = profile;
        sized.sw.buffer_bytes = buffer;
        auto on = spec_on_profile(spec, sized);
        if (!on.ok()) {
          // A buffer smaller than the headroom reserve cannot run at all: it misses.
          if (on.error().code() == error_code::invalid_argument && buffer < profile.sw.buffer_bytes)
            return sized_probe{};
          return std::move(on).error();
        }
        auto p = run_probe(*on, "buffer_for_target", settings);
        if (!p.ok()) return std::move(p).error().with_context(name + ", buffer " + std::to_string(buffer) + " B");
        p->probe.buffer_bytes = buffer;
        pb.probes.push_back(p->probe);
        const bool shortfall = p->probe.headroom_shortfall();
        if (shortfall) pb.shortfalls.push_back(p->probe);
        const bool meets = !shortfall && p->probe.complete && p->probe.fct_p99_ns <= settings.p99_target_ns;
        say("buffer " + std::to_string(buffer / 1024) + " KiB: pooled p99 " +
            std::to_string(p->probe.fct_p99_ns / 1000) + " us" +
            (shortfall ? ", " + std::to_string(p->probe.drops) + " drops with PFC on (headroom shortfall)"
                       : meets ? " (meets the target)" : ""));
        return sized_probe{meets, shortfall, p->probe.fct_p99_ns};
      };
      auto search = [&]() -> result<target_outcome> {
        auto at_profile = probe_at(profile.sw.buffer_bytes);
        if (!at_profile.ok()) return std::move(at_profile).error();
        pb.p99_at_profile_ns = at_profile->p99_ns;
        if (at_profile->shortfall) return target_outcome::headroom_shortfall;
        pb.target_met_by_profile = at_profile->meets;
        // Below the headroom reserve no buffer can run the workload at all.
        const std::int64_t floor = std::max<std::int64_t>(
            settings.min_buffer_bytes,
            pb.headroom.reserved_bytes + pb.headroom.reserved_bytes / 4 + profile.sw.cell_bytes);
        std::int64_t hi = profile.sw.buffer_bytes;
        if (!pb.target_met_by_profile) {
          hi = cells_down(static_cast<std::int64_t>(static_cast<double>(profile.sw.buffer_bytes) * settings.max_buffer_factor),
                          profile.sw.cell_bytes);
          if (hi > profile.sw.buffer_bytes) {
            auto at_top = probe_at(hi);
            if (!at_top.ok()) return std::move(at_top).error();
            if (at_top->shortfall) return target_outcome::headroom_shortfall;
            if (!at_top->meets) return target_outcome::not_reachable;
          } else {
            return target_outcome::not_reachable;
          }
        }
        const double ratio = std::exp2(1.0 / settings.grid_steps_per_octave);
        std::int64_t lo = 0;  // the largest size that missed; 0: none yet
        while (lo == 0 && hi > floor) {
          const std::int64_t next = std::max(
              floor, cells_down(static_cast<std::int64_t>(static_cast<double>(hi) / ratio), profile.sw.cell_bytes));
          if (next >= hi) break;
          auto at = probe_at(next);
          if (!at.ok()) return std::move(at).error();
          if (at->shortfall) return target_outcome::headroom_shortfall;
          (at->meets ? hi : lo) = next;
        }
        if (lo == 0) {
          pb.buffer_for_target_bytes = hi;
          return hi <= floor ? target_outcome::at_most : target_outcome::met;
        }
        // Invariant: lo missed; hi and every probed size above it met.
        while (static_cast<double>(hi) / static_cast<double>(lo) - 1 > settings.buffer_tolerance) {
          const auto mid = cells_down(
              static_cast<std::int64_t>(std::sqrt(static_cast<double>(lo) * static_cast<double>(hi))),
              profile.sw.cell_bytes);
          if (mid <= lo || mid >= hi) break;
          auto m = probe_at(mid);
          if (!m.ok()) return std::move(m).error();
          if (m->shortfall) return target_outcome::headroom_shortfall;
          (m->meets ? hi : lo) = mid;
        }
        pb.buffer_for_target_bytes = hi;
        return target_outcome::met;
      };
      auto outcome = search();
      if (!outcome.ok()) return std::move(outcome).error();
      pb.target = *outcome;
      if (pb.target != target_outcome::met && pb.target != target_outcome::at_most) pb.buffer_for_target_bytes = 0;
    }
    out.profiles.push_back(std::move(pb));
  }
  return out;
}

}  // namespace rocelab::experiments
