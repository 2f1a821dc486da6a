// Buffer validation (buffers.hpp): headroom arithmetic per profile, and two searches on
// the twin (lossless incast degree, buffer for a p99 target).
#include "rocelab/experiments/buffers/buffers.hpp"

#include <algorithm>
#include <cmath>

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

result<probe_outcome> run_probe(const experiment_spec& spec, const std::string& search,
                                const buffers_settings& settings) {
  probe_outcome out;
  out.probe.search = search;
  out.probe.buffer_bytes = spec.sw.buffer_bytes;
  out.probe.degree = spec.workload.incast.enabled ? spec.workload.incast.senders : 0;
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
  std::vector<const run_records*> runs;
  for (const auto& r : ran->repeats) runs.push_back(&r);
  const run_summary s = summarize(runs, ran->seeds);
  out.probe.drops = s.drops;
  out.probe.pause_frames = s.pause_frames;
  out.probe.fct_p99_ns = s.all.fct_p99_ns;
  out.probe.complete = s.all.completed == s.all.flows;
  out.lossless = s.drops == 0 && out.probe.complete;
  return out;
}

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
  if (!(settings.max_buffer_factor >= 1) || !(settings.buffer_tolerance > 0))
    return status(error_code::invalid_argument, "rocelab buffers: max_buffer_factor >= 1 and buffer_tolerance > 0");
  const std::uint32_t steps = buffers_steps(profiles.size(), settings);
  std::uint32_t step = 0;
  buffers_result out;
  out.spec_name = spec.name;
  out.incast_flow_bytes = static_cast<std::uint32_t>(spec.workload.incast.flow_bytes);
  out.p99_target_ns = settings.p99_target_ns;

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

    // The buffer for the p99 target: bisection on a log scale.
    if (settings.p99_target_ns > 0) {
      ++step;
      pb.target_searched = true;
      auto p99_with = [&](std::int64_t buffer, bool record) -> result<std::pair<bool, std::int64_t>> {
        fabric_profile_file sized = profile;
        sized.sw.buffer_bytes = buffer;
        auto on = spec_on_profile(spec, sized);
        if (!on.ok()) {
          // A buffer smaller than the headroom reserve cannot run at all: it misses.
          if (on.error().code() == error_code::invalid_argument && buffer < profile.sw.buffer_bytes)
            return std::pair<bool, std::int64_t>{false, 0};
          return std::move(on).error();
        }
        auto p = run_probe(*on, "buffer_for_target", settings);
        if (!p.ok()) return std::move(p).error().with_context(name + ", buffer " + std::to_string(buffer) + " B");
        p->probe.buffer_bytes = buffer;
        if (record) pb.probes.push_back(p->probe);
        const bool meets = p->probe.complete && p->probe.fct_p99_ns <= settings.p99_target_ns;
        say("buffer " + std::to_string(buffer / 1024) + " KiB: p99 " + std::to_string(p->probe.fct_p99_ns / 1000) +
            " us" + (meets ? " (meets the target)" : ""));
        return std::pair<bool, std::int64_t>{meets, p->probe.fct_p99_ns};
      };
      auto at_profile = p99_with(profile.sw.buffer_bytes, true);
      if (!at_profile.ok()) return std::move(at_profile).error();
      pb.target_met_by_profile = at_profile->first;
      pb.p99_at_profile_ns = at_profile->second;
      // Below the headroom reserve no buffer can run the workload at all.
      std::int64_t lo = std::max<std::int64_t>(
          settings.min_buffer_bytes, pb.headroom.reserved_bytes + pb.headroom.reserved_bytes / 4 + profile.sw.cell_bytes);
      std::int64_t hi = static_cast<std::int64_t>(static_cast<double>(profile.sw.buffer_bytes) * settings.max_buffer_factor);
      if (pb.target_met_by_profile) hi = profile.sw.buffer_bytes;
      auto at_hi = hi == profile.sw.buffer_bytes ? at_profile : p99_with(hi, true);
      if (!at_hi.ok()) return std::move(at_hi).error();
      pb.target_reachable = at_hi->first;
      if (pb.target_reachable) {
        auto at_lo = p99_with(lo, true);
        if (!at_lo.ok()) return std::move(at_lo).error();
        if (at_lo->first) {
          hi = lo;
          pb.target_at_search_floor = true;
        } else {
          // Invariant: !meets(lo), meets(hi).
          while (static_cast<double>(hi) / static_cast<double>(lo) - 1 > settings.buffer_tolerance) {
            const auto mid = cells_down(
                static_cast<std::int64_t>(std::sqrt(static_cast<double>(lo) * static_cast<double>(hi))),
                profile.sw.cell_bytes);
            if (mid <= lo || mid >= hi) break;
            auto m = p99_with(mid, true);
            if (!m.ok()) return std::move(m).error();
            (m->first ? hi : lo) = mid;
          }
        }
        pb.buffer_for_target_bytes = hi;
      }
    }
    out.profiles.push_back(std::move(pb));
  }
  return out;
}

}  // namespace rocelab::experiments
