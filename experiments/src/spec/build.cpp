#include "rocelab/experiments/spec/build.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "rocelab/common/units.hpp"
#include "rocelab/experiments/calibration/twin_timing.hpp"
#include "rocelab/experiments/run/backend_traits.hpp"
#include "rocelab/experiments/spec/spec_files.hpp"
#include "rocelab/experiments/spec/spec_limits.hpp"
#include "rocelab/fabric/headroom.hpp"
#include "rocelab/fabric/twin/flow_ideal.hpp"
#include "rocelab/fabric/twin/uec_profile.hpp"
#include "rocelab/traffic/allreduce.hpp"
#include "rocelab/traffic/background.hpp"
#include "rocelab/traffic/composite.hpp"
#include "rocelab/traffic/flow_list.hpp"
#include "rocelab/traffic/incast.hpp"
#include "rocelab/traffic/message_list.hpp"
#include "rocelab/traffic/victim.hpp"
#include "spec/spec_origin.hpp"

namespace rocelab::experiments {
namespace {

status bad(const std::string& what) { return {error_code::invalid_argument, what}; }

status fail(const experiment_spec& spec, const std::string& path, const std::string& msg) {
  return bad(origin_of(spec, path) + ": " + path + ": " + msg);
}

traffic::incast_config incast_of(const incast_spec& s) {
  traffic::incast_config c;
  c.receiver = s.receiver;
  c.senders = s.sender_hosts;
  c.sender_count = s.senders;
  c.flow_bytes = static_cast<std::uint64_t>(s.flow_bytes);
  c.rounds = s.rounds;
  c.round_gap_ns = s.round_gap_ns;
  c.start_ns = s.start_ns;
  c.start_jitter_ns = s.start_jitter_ns;
  c.priority = static_cast<std::int16_t>(s.priority);
  return c;
}

// ranks_per_host: the servers' NICs on a rail-optimized fabric (the hierarchical
// algorithms' g).
traffic::allreduce_config allreduce_of(const allreduce_spec& s, const topology_spec& t) {
  traffic::allreduce_config c;
  for (const auto a : traffic::all_allreduce_algorithms)
    if (s.algorithm == traffic::to_string(a)) c.algorithm = a;
  c.ranks_per_host = t.type == "rail_optimized" ? t.nics_per_host : 1;
  c.slices = s.slices;
  c.ranks = s.rank_hosts;
  c.rank_count = s.ranks;
  c.bytes = static_cast<std::uint64_t>(s.bytes);
  c.iterations = s.iterations;
  c.start_ns = s.start_ns;
  c.iteration_gap_ns = s.iteration_gap_ns;
  c.priority = static_cast<std::int16_t>(s.priority);
  return c;
}

traffic::victim_config victim_of(const victim_spec& s) {
  traffic::victim_config c;
  c.hosts = s.hosts;
  c.receivers = s.receivers;
  c.flow_bytes = static_cast<std::uint64_t>(s.flow_bytes);
  c.flows_per_sender = s.flows_per_sender;
  c.start_ns = s.start_ns;
  c.gap_ns = s.gap_ns;
  c.priority = static_cast<std::int16_t>(s.priority);
  return c;
}

// The victims' schedule against the spec's incast (when it has one). Errors name the
// victim field at fault ("workload.victim.receivers").
result<std::unique_ptr<fabric::twin::workload>> victims_of(const experiment_spec& spec, std::uint64_t seed) {
  const workload_spec& w = spec.workload;
  const traffic::incast_config incast = incast_of(w.incast);
  auto part =
      traffic::make_victims(victim_of(w.victim), w.incast.enabled ? &incast : nullptr, spec.topology.hosts, seed);
  if (part) return part;
  // The error starts with the victim_config field at fault, which is the spec's field.
  const std::string message = part.error().message();
  const auto colon = message.find(": ");
  if (colon != std::string::npos && find_field("workload.victim." + message.substr(0, colon)) != nullptr)
    return fail(spec, "workload.victim." + message.substr(0, colon), message.substr(colon + 2));
  return fail(spec, "workload.victim", message);
}

result<traffic::flow_size_cdf> cdf_of(const experiment_spec& spec) {
  const std::string& name = spec.workload.background.cdf;
  for (const auto& builtin : traffic::flow_size_cdf::builtin_names())
    if (name == builtin) return traffic::flow_size_cdf::builtin(name);
  // Errors name the file the client inlined, from the comment line inlining put first.
  if (is_inline_cdf(name))
    return traffic::flow_size_cdf::parse(
        name, name.rfind("# ", 0) == 0 ? "inline CDF " + name.substr(2, name.find('\n') - 2) : "inline CDF");
  std::filesystem::path path(name);
  if (path.is_relative() && !spec.base_dir.empty()) path = std::filesystem::path(spec.base_dir) / path;
  return traffic::flow_size_cdf::load_file(path.string());
}

// Where twin.calibration's calibration comes from, for messages and reading: its path
// (relative to the spec's folder), or the file the client inlined.
std::string calibration_source(const experiment_spec& spec) {
  const std::string& value = spec.twin.calibration;
  if (is_inline_calibration(value))
    return value.rfind("# ", 0) == 0 ? "inline calibration " + value.substr(2, value.find('\n') - 2)
                                     : "inline calibration";
  std::filesystem::path path(value);
  if (path.is_relative() && !spec.base_dir.empty()) path = std::filesystem::path(spec.base_dir) / path;
  return path.string();
}

// workload.flow_list's flows: read from its file (relative to the spec's folder), or parsed
// from the text the client inlined. An inlined file's first line is the comment naming it
// (inline_file_references); it is left out so that errors give the file's own name and
// line numbers. Errors name the field's origin and the field.
result<traffic::flow_list> flow_list_of(const experiment_spec& spec) {
  const std::string& value = spec.workload.flow_list;
  const std::uint32_t hosts = spec.topology.hosts;
  auto read = [&]() -> result<traffic::flow_list> {
    if (!is_inline_flow_list(value)) {
      std::filesystem::path path(value);
      if (path.is_relative() && !spec.base_dir.empty()) path = std::filesystem::path(spec.base_dir) / path;
      return traffic::load_flow_list(path.string(), hosts);
    }
    std::string_view text = value;
    if (!text.starts_with("# ")) return traffic::parse_flow_list(text, "inline flow list", hosts);
    const auto nl = text.find('\n');
    const std::string source(text.substr(2, nl - 2));
    return traffic::parse_flow_list(text.substr(nl + 1), source, hosts);
  };
  auto list = read();
  if (!list) return fail(spec, "workload.flow_list", list.error().message());
  if (list->messages.empty()) return fail(spec, "workload.flow_list", list->source + ": lists no flows");
  return list;
}

// What a flow list asks that a backend cannot give: a flow that would start after the
// twin stops, or, on a lab, a flow on a priority other than the one every lab NIC sends
// on (nic.data_priority; the fleet has no per-flow priority).
status check_flow_list(const experiment_spec& spec, const traffic::flow_list& list) {
  const bool simulated = backend_traits_of(spec.backend).simulated;
  for (std::size_t i = 0; i < list.messages.size(); ++i) {
    const fabric::twin::message& m = list.messages[i];
    const std::string where = list.source + ":" + std::to_string(list.lines[i]) + ": ";
    if (simulated && m.start_ns >= spec.twin.stop_ns)
      return fail(spec, "workload.flow_list",
                  where + "the flow starts at " + format_duration(m.start_ns) + ", not before twin.stop_ns " +
                      format_duration(spec.twin.stop_ns) + ": it could not run");
    if (!simulated && m.priority >= 0 && static_cast<std::uint32_t>(m.priority) != spec.nic.data_priority)
      return fail(spec, "workload.flow_list",
                  where + "priority " + std::to_string(m.priority) + ": a lab's NICs send every flow on "
                          "nic.data_priority (" + std::to_string(spec.nic.data_priority) +
                          "); per-flow priorities run on the twin");
  }
  return status::success();
}

result<traffic::background_config> background_of(const experiment_spec& spec) {
  const background_spec& s = spec.workload.background;
  auto cdf = cdf_of(spec);
  if (!cdf) return cdf.error();
  traffic::background_config c;
  c.cdf = std::move(*cdf);
  c.load = s.load;
  c.hosts = s.hosts;
  c.start_ns = s.start_ns;
  c.duration_ns = s.duration_ns;
  c.max_flows = s.max_flows;
  c.priority = static_cast<std::int16_t>(s.priority);
  return c;
}

}  // namespace

status validate(const experiment_spec& spec) {
  ROCELAB_RETURN_IF_ERROR(check_limits(spec));
  const topology_spec& t = spec.topology;
  if (t.type == "leaf_spine") {
    if (t.leaves == 0) return fail(spec, "topology.leaves", "leaf_spine needs leaves >= 1");
    if (t.spines == 0) return fail(spec, "topology.spines", "leaf_spine needs spines >= 1");
    if (t.hosts % t.leaves != 0)
      return fail(spec, "topology.hosts",
                  std::to_string(t.hosts) + " hosts do not divide evenly over " + std::to_string(t.leaves) + " leaves");
  }
  if (t.type == "fat_tree") {
    if (t.k < 2 || t.k % 2 != 0)
      return fail(spec, "topology.k", "fat_tree needs an even k >= 2 (ports per switch), not " + std::to_string(t.k));
    const std::uint32_t hosts = t.k * t.k * t.k / 4;
    if (t.hosts != hosts)
      return fail(spec, "topology.hosts",
                  "a k=" + std::to_string(t.k) + " fat_tree has k^3/4 = " + std::to_string(hosts) + " hosts, not " +
                      std::to_string(t.hosts));
  }
  if (t.type != "fat_tree" && t.k != 0) return fail(spec, "topology.k", "applies to fat_tree only");
  for (std::uint32_t p : spec.sw.pfc.priorities)
    if (p > 7) return fail(spec, "switch.pfc.priorities", "priority " + std::to_string(p) + " is not 0..7");
  for (std::uint32_t q : spec.sw.ecn.queues)
    if (q > 7) return fail(spec, "switch.ecn.queues", "queue " + std::to_string(q) + " is not 0..7");
  if (spec.sw.ecn.enabled && spec.sw.ecn.kmin_bytes > spec.sw.ecn.kmax_bytes)
    return fail(spec, "switch.ecn.kmin_bytes",
                format_size(spec.sw.ecn.kmin_bytes) + " > switch.ecn.kmax_bytes " + format_size(spec.sw.ecn.kmax_bytes));
  if (spec.sw.buffer_bytes < spec.sw.cell_bytes)
    return fail(spec, "switch.buffer_bytes", "smaller than one cell");
  if (auto st = spec.nic.dcqcn.validate(); !st.ok()) return fail(spec, "nic.dcqcn", st.message());
  if (auto c = lossless_class_of(spec); !c) return c.error();
  if (spec.scaling.hardware_gbps > 0) {
    // Lab scaling dilates a software fabric; a hardware lab runs at its own speed and
    // would take the dilated times as its own.
    if (backend_traits_of(spec.backend).needs_lab)
      return fail(spec, "scaling.hardware_gbps",
                  "is for the virtual lab and the twin; a hardware lab runs at its links' own speed (remove it)");
    if (spec.scaling.hardware_gbps < t.link_gbps)
      return fail(spec, "scaling.hardware_gbps",
                  "is below topology.link_gbps: a scaled fabric runs slower than the hardware it stands for");
  }

  if (!backend_traits_of(spec.backend).simulated) {
    // The twin's alone: a reference simulator's framing and fixed queues.
    if (t.frame_overhead_bytes != topology_spec{}.frame_overhead_bytes)
      return fail(spec, "topology.frame_overhead_bytes",
                  "is for the twin: a lab's Ethernet sends every frame with its preamble and inter-frame gap (20 "
                  "bytes), and the virtual lab's soft NICs and switch pace frames as it does (remove it)");
    if (spec.sw.queue_limit_bytes != 0)
      return fail(spec, "switch.queue_limit_bytes",
                  "is for the twin: a lab's switch keeps its own queue thresholds (the virtual lab's soft switch "
                  "its profile, a hardware switch its buffer profiles) (remove it)");
  }
  const std::int64_t smallest_queue = std::max<std::int64_t>(spec.nic.mtu_bytes, spec.sw.cell_bytes);
  if (spec.sw.queue_limit_bytes > 0 && spec.sw.queue_limit_bytes < smallest_queue)
    return fail(spec, "switch.queue_limit_bytes",
                format_size(spec.sw.queue_limit_bytes) + " holds no full packet (nic.mtu_bytes " +
                    std::to_string(spec.nic.mtu_bytes) + ", switch.cell_bytes " + std::to_string(spec.sw.cell_bytes) +
                    ")");

  const workload_spec& w = spec.workload;
  if (!w.incast.enabled && !w.allreduce.enabled && !w.background.enabled && !w.victim.enabled && w.flow_list.empty())
    return fail(spec, "workload",
                "no workload: add workload.incast, workload.allreduce, workload.background or workload.flow_list");
  if (w.incast.enabled)
    if (auto st = traffic::validate(incast_of(w.incast), t.hosts); !st.ok())
      return fail(spec, "workload.incast", st.message());
  if (w.allreduce.enabled) {
    const traffic::allreduce_config c = allreduce_of(w.allreduce, t);
    if (auto st = traffic::validate(c, t.hosts); !st.ok()) return fail(spec, "workload.allreduce", st.message());
    // Rings or trees over rails: a server's ranks are its NICs, local rank i on NIC i (rail i).
    const std::uint32_t g = c.ranks_per_host;
    if (traffic::is_hierarchical(c.algorithm) && g > 1)
      for (std::uint32_t r = 0; r < c.ranks.size(); ++r) {
        const std::uint32_t h = c.ranks[r], first = c.ranks[r / g * g];
        if (h / g != first / g || h % g != r % g)
          return fail(spec, "workload.allreduce.rank_hosts",
                      std::string(traffic::to_string(c.algorithm)) + ": rank " + std::to_string(r) + " is on host " +
                          std::to_string(h) + ", not NIC " + std::to_string(r % g) + " of the server of rank " +
                          std::to_string(r / g * g) + " (host " + std::to_string(first) + "): each " +
                          std::to_string(g) + " consecutive ranks are one server's NICs 0.." + std::to_string(g - 1));
      }
  }
  if (w.background.enabled) {
    auto c = background_of(spec);
    if (!c) return fail(spec, "workload.background.cdf", c.error().message());
    if (auto st = traffic::validate(*c, t.hosts); !st.ok()) return fail(spec, "workload.background", st.message());
  }
  if (w.victim.enabled)
    if (auto part = victims_of(spec, spec.seed); !part) return part.error();
  if (!w.flow_list.empty()) {
    auto list = flow_list_of(spec);
    if (!list) return list.error();
    ROCELAB_RETURN_IF_ERROR(check_flow_list(spec, *list));
  }
  auto twin = to_twin_config(spec, spec.seed);
  if (!twin) return twin.error();
  // Whatever else the twin refuses, named at the spec field its message starts with.
  if (auto st = fabric::twin::validate(*twin); !st.ok()) {
    const std::string& msg = st.message();
    const std::string field = msg.substr(0, msg.find_first_of(" :"));
    if (find_field(field) != nullptr || is_section(field)) return fail(spec, field, msg.substr(field.size() + 1));
    return fail(spec, "twin", msg);
  }
  return status::success();
}

std::function<std::int64_t(std::uint32_t, std::uint32_t, std::uint64_t)> ideal_fct_of(const experiment_spec& spec) {
  auto config = to_twin_config(spec, spec.seed);
  if (!config) return [](std::uint32_t, std::uint32_t, std::uint64_t) { return std::int64_t{0}; };
  auto built = fabric::twin::flow_ideal::create(*config);
  if (!built) return [](std::uint32_t, std::uint32_t, std::uint64_t) { return std::int64_t{0}; };
  auto ideal = std::make_shared<const fabric::twin::flow_ideal>(std::move(*built));
  return [ideal](std::uint32_t src, std::uint32_t dst, std::uint64_t bytes) { return ideal->fct_ns(src, dst, bytes); };
}

result<fabric::lossless_class> lossless_class_of(const experiment_spec& spec) {
  auto c = fabric::make_lossless_class(spec.nic.data_priority, spec.nic.data_dscp, spec.nic.dcqcn, spec.sw.pfc.enabled);
  if (!c) {
    const std::string msg = c.error().message();
    return fail(spec, msg.substr(0, msg.find(' ')), msg.substr(msg.find(' ') + 1));
  }
  return c;
}

std::uint32_t max_ports_per_switch(const topology_spec& t) {
  if (t.type == "fat_tree") return t.k;
  if (t.type == "rail_optimized" && t.leaves > 0 && t.nics_per_host > 0)
    return std::max(t.hosts / t.nics_per_host / t.leaves + t.spines, t.leaves * t.nics_per_host);
  if (t.type != "leaf_spine" || t.leaves == 0) return t.hosts;
  return std::max(t.hosts / t.leaves + t.spines, t.leaves);
}

namespace {

// The spec's fabric section as the twin's fabric_mode. InfiniBand runs IB congestion
// control where the spec enables DCQCN (the NIC's congestion control, whichever fabric).
result<fabric::fabric_mode> fabric_mode_of(const experiment_spec& spec) {
  fabric::fabric_mode m;
  auto link = fabric::parse_link_layer(spec.fabric.link);
  if (!link) return fail(spec, "fabric.link", link.error().message());
  auto routing = fabric::parse_routing_mode(spec.fabric.routing);
  if (!routing) return fail(spec, "fabric.routing", routing.error().message());
  m.link = *link;
  m.routing = *routing;
  m.switch_latency_ns = spec.fabric.switch_latency_ns;
  if (m.link == fabric::link_layer::infiniband) {
    m.congestion = spec.nic.dcqcn_enabled ? fabric::congestion_control_kind::ib_cc : fabric::congestion_control_kind::none;
    m.ib_vl_buffer_bytes = spec.fabric.ib_vl_buffer_bytes;
    // FECN threshold: a tenth of a VL buffer, at least two packets (annex A10 leaves it to
    // the switch's Threshold setting). Two VLs share a port's buffer when split evenly.
    const std::int64_t ports = max_ports_per_switch(spec.topology);
    const std::int64_t vl = m.ib_vl_buffer_bytes > 0 ? m.ib_vl_buffer_bytes : spec.sw.buffer_bytes / (ports * 2);
    m.ib_cc.marking_threshold_bytes = std::max<std::int64_t>(vl / 10, 2 * (spec.nic.mtu_bytes + 64));
  } else if (m.link == fabric::link_layer::uec) {
    // DCQCN and PFC are RoCE's: a spec that sets either for a UEC fabric says the wrong
    // fabric, so the field is named rather than ignored.
    for (const char* roce_only : {"nic.dcqcn.", "switch.pfc."})
      for (const auto& [path, origin] : spec.origins)
        if (path.rfind(roce_only, 0) == 0)
          return fail(spec, path, "is a RoCE setting; fabric.link uec uses fabric.uec (nscc, rccc, trimming)");
    m.congestion = fabric::congestion_control_kind::none;
    const uec_spec& u = spec.fabric.uec;
    auto profile = fabric::parse_uec_profile(u.profile);
    if (!profile) return fail(spec, "fabric.uec.profile", profile.error().message());
    m.uec.profile = *profile;
    // What the htsim profile derives (fabric/twin/uec_profile.hpp) is not also given.
    if (m.uec.profile == fabric::uec_profile::htsim)
      for (const char* derived : {"fabric.uec.trim_threshold_bytes", "fabric.uec.retransmit_timeout_ns",
                                  "fabric.uec.nscc_target_qdelay_ns", "switch.ecn.", "switch.buffer_bytes",
                                  "switch.cell_bytes"})
        for (const auto& [path, origin] : spec.origins)
          if (path.rfind(derived, 0) == 0)
            return fail(spec, path, "is derived by fabric.uec.profile htsim from the fabric's BDP (remove it, or use profile rocelab)");
    auto lb = fabric::parse_load_balancing(u.load_balancing);
    if (!lb) return fail(spec, "fabric.uec.load_balancing", lb.error().message());
    m.uec.balancing = *lb;
    m.uec.nscc = u.nscc;
    m.uec.rccc = u.rccc;
    m.uec.trimming = u.trimming;
    m.uec.trim_threshold_bytes = u.trim_threshold_bytes;
    m.uec.rccc_budget_bytes = u.rccc_budget_bytes;
    m.uec.nscc_target_qdelay_ns = u.nscc_target_qdelay_ns;
    m.uec.retransmit_timeout_ns = u.retransmit_timeout_ns;
    m.uec.credit_flow_control = u.credit_flow_control;
    m.uec.link_frame_loss_rate = u.link_frame_loss_rate;
    m.uec.link_level_retry = u.link_level_retry;
  } else {
    m.congestion = spec.nic.dcqcn_enabled ? fabric::congestion_control_kind::dcqcn : fabric::congestion_control_kind::none;
  }
  if (m.link != fabric::link_layer::uec)
    for (const auto& [path, origin] : spec.origins)
      if (path.rfind("fabric.uec", 0) == 0)
        return fail(spec, path, std::string("applies to fabric.link uec only; this fabric is ") + fabric::to_string(m.link));
  if (auto st = m.validate(); !st.ok()) return fail(spec, "fabric", st.message());
  return m;
}

}  // namespace

double time_scale(const experiment_spec& spec) {
  if (spec.scaling.hardware_gbps <= 0 || spec.topology.link_gbps <= 0) return 1.0;
  return spec.scaling.hardware_gbps / spec.topology.link_gbps;
}

result<fabric::twin::twin_config> to_twin_config(const experiment_spec& spec, std::uint64_t seed) {
  fabric::twin::twin_config c;
  const topology_spec& t = spec.topology;
  c.topology.type = t.type == "leaf_spine" ? fabric::twin::topology_config::kind::leaf_spine
                    : t.type == "fat_tree" ? fabric::twin::topology_config::kind::fat_tree
                    : t.type == "rail_optimized" ? fabric::twin::topology_config::kind::rail_optimized
                                           : fabric::twin::topology_config::kind::single_switch;
  c.topology.hosts = t.hosts;
  c.topology.link_gbps = t.link_gbps;
  c.topology.link_delay_ns = t.link_delay_ns;
  c.topology.frame_overhead_bytes = static_cast<std::uint32_t>(t.frame_overhead_bytes);
  c.topology.leaves = t.leaves;
  c.topology.spines = t.spines;
  c.topology.k = t.k;
  c.topology.nics_per_host = t.nics_per_host;
  c.topology.local_link_gbps = t.local_link_gbps;
  c.topology.local_link_delay_ns = t.local_link_delay_ns;
  c.topology.spine_link_gbps = t.spine_link_gbps;
  c.topology.oversubscription = t.oversubscription;

  const switch_spec& s = spec.sw;
  fabric::switch_config& sc = c.switch_template;
  sc.buffer_bytes = s.buffer_bytes;
  sc.cell_bytes = s.cell_bytes;
  sc.ecn_mark_on_dequeue = s.ecn_mark_on_dequeue;
  sc.pfc.pause_quanta = static_cast<std::uint16_t>(s.pfc.pause_quanta);
  sc.pfc.watchdog.enabled = s.pfc.watchdog.enabled;
  sc.pfc.watchdog.detection_ns = s.pfc.watchdog.detection_ns;
  sc.pfc.watchdog.restoration_ns = s.pfc.watchdog.restoration_ns;
  sc.pfc.watchdog.action =
      fabric::parse_watchdog_action(s.pfc.watchdog.action).value_or(fabric::pfc_watchdog_config::action_kind::drop);
  sc.lossless_priorities = 0;
  if (s.pfc.enabled)
    for (std::uint32_t p : s.pfc.priorities) sc.lossless_priorities |= static_cast<std::uint8_t>(1U << p);
  sc.ecn_seed = seed;

  fabric::port_config port;
  port.rate_bps = static_cast<std::int64_t>(t.link_gbps * 1e9);
  port.cable_m = s.pfc.cable_m;
  // Headroom: as given, or 0 to let the twin size it for each link from that link's speed
  // and propagation delay (802.1Qbb Annex N via headroom_calculator). Sizing it here from
  // switch.pfc.cable_m alone would ignore topology.link_delay_ns (1 us is ~200 m of fibre,
  // 25 KB in flight each way at 100G) and the faster uplinks of a leaf-spine, and lossless
  // PGs would drop with headroom_exhausted. In the twin a link's cable is its delay, so
  // switch.pfc.cable_m counts only where a real cable does (the labs' switch settings).
  const std::int64_t headroom = s.pfc.headroom_bytes;
  for (int p = 0; p < fabric::num_priorities; ++p) {
    const bool lossless = (sc.lossless_priorities >> p) & 1U;
    fabric::pg_config& pg = port.pgs[static_cast<std::size_t>(p)];
    fabric::queue_config& q = port.queues[static_cast<std::size_t>(p)];
    if (lossless) {
      pg.shared = fabric::buffer_threshold::dynamic(s.dynamic_th);
      pg.headroom_bytes = headroom;
      pg.xon_offset_bytes = s.pfc.xon_offset_bytes;
      q.shared = fabric::buffer_threshold::unlimited();
    } else {
      pg.shared = fabric::buffer_threshold::dynamic(s.lossy_dynamic_th);
      q.shared = fabric::buffer_threshold::dynamic(s.lossy_dynamic_th);
    }
    if (s.queue_limit_bytes > 0) q.shared = fabric::buffer_threshold::fixed(s.queue_limit_bytes);
  }
  if (s.ecn.enabled)
    for (std::uint32_t qi : s.ecn.queues) {
      fabric::ecn_config& e = port.queues[qi].ecn;
      e.enabled = true;
      e.kmin_bytes = s.ecn.kmin_bytes;
      e.kmax_bytes = s.ecn.kmax_bytes;
      e.pmax = s.ecn.pmax;
    }
  sc.ports = {port};
  if (auto st = fabric::validate(sc); !st.ok()) return fail(spec, "switch", st.message());

  fabric::twin::nic_config& n = c.nic;
  n.mtu_bytes = spec.nic.mtu_bytes;
  n.dcqcn_enabled = spec.nic.dcqcn_enabled;
  n.dcqcn = spec.nic.dcqcn;
  // A lab-scaled spec (scaling_spec): the hardware's DCQCN on the lab's clock.
  if (spec.scaling.hardware_gbps > 0) n.dcqcn.time_scale = time_scale(spec);
  n.data_priority = static_cast<std::uint8_t>(spec.nic.data_priority);
  n.pfc_enabled = s.pfc.enabled;
  n.retransmit_timeout_ns = spec.nic.retransmit_timeout_ns;
  n.ack_every_packets = spec.nic.ack_every_packets;
  n.one_qp_per_peer = spec.nic.qp_per_peer;

  c.seed = seed;
  c.stop_ns = spec.twin.stop_ns;
  c.queue_sample_interval_ns = spec.twin.queue_sample_interval_ns;
  c.flow_timeline_interval_ns = spec.twin.flow_timeline_interval_ns;
  c.hpcc_ns3_compat = spec.twin.hpcc_ns3_compat;
  c.max_events = spec.twin.max_events;
  auto mode = fabric_mode_of(spec);
  if (!mode) return mode.error();
  c.fabric = *mode;
  if (!spec.twin.calibration.empty()) {
    auto cal = calibration_of(spec);
    if (!cal) return cal.error();
    auto lab = lab_timing_of(*cal, c.topology, calibration_source(spec));
    if (!lab) return fail(spec, "twin.calibration", lab.error().message());
    c.lab = std::move(*lab);
  }
  return fabric::twin::with_uec_profile(std::move(c));
}

result<calibration> calibration_of(const experiment_spec& spec) {
  const std::string& value = spec.twin.calibration;
  auto cal = is_inline_calibration(value) ? parse_calibration(value, calibration_source(spec))
                                          : read_calibration_file(calibration_source(spec));
  if (!cal) return fail(spec, "twin.calibration", cal.error().message());
  return cal;
}

result<std::unique_ptr<fabric::twin::workload>> make_workload(const experiment_spec& spec, std::uint64_t seed) {
  std::vector<std::unique_ptr<fabric::twin::workload>> parts;
  const std::uint32_t hosts = spec.topology.hosts;
  const workload_spec& w = spec.workload;
  // Background first: its flows are posted at start, then the file's flows and the incast
  // and all-reduce that run on top of them.
  if (w.background.enabled) {
    auto c = background_of(spec);
    if (!c) return fail(spec, "workload.background.cdf", c.error().message());
    auto part = traffic::make_background(std::move(*c), hosts, seed);
    if (!part) return fail(spec, "workload.background", part.error().message());
    parts.push_back(std::move(*part));
  }
  if (!w.flow_list.empty()) {
    auto list = flow_list_of(spec);
    if (!list) return list.error();
    parts.push_back(std::make_unique<traffic::message_list_workload>(std::move(list->messages)));
  }
  if (w.incast.enabled) {
    auto part = traffic::make_incast(incast_of(w.incast), hosts, seed);
    if (!part) return fail(spec, "workload.incast", part.error().message());
    parts.push_back(std::move(*part));
  }
  if (w.allreduce.enabled) {
    auto part = traffic::make_allreduce(allreduce_of(w.allreduce, spec.topology), hosts);
    if (!part) return fail(spec, "workload.allreduce", part.error().message());
    parts.push_back(std::move(*part));
  }
  if (w.victim.enabled) {
    auto part = victims_of(spec, seed);
    if (!part) return part.error();
    parts.push_back(std::move(*part));
  }
  if (parts.empty()) return fail(spec, "workload", "no workload");
  if (parts.size() == 1) return std::move(parts.front());
  return std::unique_ptr<fabric::twin::workload>(std::make_unique<traffic::composite_workload>(std::move(parts)));
}

}  // namespace rocelab::experiments
