#include "rocelab/experiments/lab/calibrate_lab.hpp"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "lab/lab_for_spec.hpp"
#include "rocelab/agents/lab/virtual_lab.hpp"
#include "rocelab/captures/capture_file.hpp"
#include "rocelab/captures/dissect.hpp"
#include "rocelab/captures/wire/roce.hpp"
#include "rocelab/common/own_executable.hpp"
#include "rocelab/experiments/calibration/calibration_measure.hpp"
#include "rocelab/experiments/lab/virtual_backend.hpp"
#include "rocelab/fabric/drivers/soft_switch_driver.hpp"
#include "rocelab/fabric/soft_switch/control_client.hpp"
#include "rocelab/fabric/soft_switch/latency_histogram_json.hpp"
#include "rocelab/traffic/soft_nic/nic_fleet.hpp"

namespace rocelab::experiments {

namespace lab = agents::lab;
namespace nic = traffic::soft_nic;
using json = nlohmann::json;

namespace {

std::string utc_now_iso8601() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void step(const calibrate_options& o, const std::string& what) {
  if (o.on_step) o.on_step(what);
}

// The fleet's result as the plan's stamps: each message's post, end and wire, and each
// NIC's receive processing histogram.
status take_fleet_result(const nic::fleet_result& r, calibration_stamps& stamps) {
  stamps.messages.clear();
  for (std::size_t i = 0; i < r.records.flows.size(); ++i) {
    const flow_record& f = r.records.flows[i];
    measured_message m;
    m.src = f.src;
    m.dst = f.dst;
    m.qp = f.qp;
    m.cnps = f.cnps;
    m.start_ns = f.start_ns;
    m.end_ns = f.completed() ? f.end_ns : -1;
    if (i < r.wire.size() && r.wire[i].reported) {
      const nic::message_wire& w = r.wire[i];
      m.wire_reported = true;
      m.wire = {w.first_tx_ns, w.last_tx_ns, w.wire_bytes, w.last_wire_bytes};
    }
    stamps.messages.push_back(m);
  }
  // Each NIC's histograms from its counters line (traffic/soft_nic nic_process).
  auto histograms = [&](const char* key, std::vector<fabric::latency_histogram>& out) -> status {
    out.assign(r.nic_counters.size(), {});
    for (std::size_t h = 0; h < r.nic_counters.size(); ++h) {
      const json& c = r.nic_counters[h];
      if (!c.is_object() || !c.contains(key)) continue;
      auto hist = fabric::soft_switch::latency_histogram_from_json(c[key]);
      if (!hist) return hist.error().with_context("the NIC of host " + std::to_string(h + 1) + ": " + key);
      out[h] = *hist;
    }
    return status::success();
  };
  ROCELAB_RETURN_IF_ERROR(histograms("rx_processing", stamps.rx_processing));
  return histograms("tx_lateness", stamps.tx_lateness);
}

// Each of the first `ports` switch ports' forwarding latency since the counters were reset.
result<std::vector<fabric::latency_histogram>> read_forwarding(const std::string& control_socket, std::uint32_t ports) {
  auto c = fabric::soft_switch::control_client::connect(control_socket);
  if (!c) return c.error().with_context("connecting to the switch");
  auto j = c->call({{"op", "counters"}});
  if (!j) return j.error().with_context("reading the switch's counters");
  const json list = j->value("ports", json::array());
  if (list.size() < ports)
    return status(error_code::malformed_input,
                  "the switch reports " + std::to_string(list.size()) + " ports, the lab has " + std::to_string(ports));
  std::vector<fabric::latency_histogram> out;
  for (std::uint32_t p = 0; p < ports; ++p) {
    if (!list[p].contains("forwarding_latency"))
      return status(error_code::unsupported, "the switch does not report forwarding_latency (an older rocelab switch?)");
    auto h = fabric::soft_switch::latency_histogram_from_json(list[p]["forwarding_latency"]);
    if (!h) return h.error().with_context("switch port " + std::to_string(p));
    out.push_back(*h);
  }
  return out;
}

// The CE-marked data packets and CNPs of a capture of the switch's egress mirror, in order
// (the arrival copies, ERSPAN, are not egress frames and are left out).
result<std::vector<loop_frame>> loop_frames_of(const std::string& path) {
  auto reader = captures::capture_file_reader::open(path);
  if (!reader) return reader.error().with_context("reading the capture " + path);
  std::vector<loop_frame> out;
  captures::packet_view p;
  captures::dissected_frame d;
  while (reader->next(p)) {
    const auto& ifs = reader->interfaces();
    const captures::link_type link = p.interface_id < ifs.size() ? ifs[p.interface_id].link : captures::link_type::ethernet;
    d = {};
    captures::dissect(link, p.bytes, d);
    if (d.erspan_type != 0 || !d.is_roce || d.ip_version != 4) continue;
    const bool cnp = d.bth_opcode == captures::wire::roce_opcode::cnp;
    const bool ce_data = d.ecn == 3 && d.bth_opcode <= captures::wire::roce_opcode::rc_rdma_write_only_with_immediate;
    if (!cnp && !ce_data) continue;
    loop_frame f;
    f.t_ns = p.timestamp_ns;
    f.cnp = cnp;
    f.ip_src = d.ip_src;
    f.ip_dst = d.ip_dst;
    f.wire_bytes = std::max<std::uint32_t>(p.original_length - d.inner_offset, 60) + 24;
    out.push_back(f);
  }
  if (!reader->error().ok()) return reader->error().with_context("reading the capture " + path);
  return out;
}

// The spec of the CNP loop's run: the spec's lab with ECN marking low enough that a 2:1
// incast marks within its first milliseconds, and DCQCN's notification point on.
experiment_spec cnp_loop_spec(const experiment_spec& spec) {
  experiment_spec s = spec;
  s.sw.ecn.enabled = true;
  s.sw.ecn.kmin_bytes = 16 * 1024;
  s.sw.ecn.kmax_bytes = 128 * 1024;
  s.sw.ecn.pmax = 0.2;
  s.nic.dcqcn_enabled = true;
  return s;
}

}  // namespace

result<calibration> calibrate_lab(const experiment_spec& spec, const calibrate_options& o) {
  ROCELAB_RETURN_IF_ERROR(calibration_refusal(spec));
  if (o.pings == 0) return status(error_code::invalid_argument, "pings: at least 1 per pair");
  const std::uint32_t n = spec.topology.hosts;
  if (n < 2) return status(error_code::invalid_argument, "topology.hosts: a calibration needs at least 2 hosts");
  const std::string root = o.state_root.empty() ? lab::default_state_root : o.state_root;
  const std::string binary = o.rocelab_binary.empty() ? own_executable_path() : o.rocelab_binary;
  const experiment_spec loop_spec = cnp_loop_spec(spec);

  // The lab: one up under the name that fits, or one brought up here (with ECN, which the
  // CNP loop turns on; the first run applies the spec's own setting).
  auto lab_up = lab_for_spec(loop_spec, o.lab_name, root, binary, [&] {
    step(o, "bringing up lab '" + o.lab_name + "': " + std::to_string(n) + " hosts at " +
                std::to_string(spec.topology.link_gbps).substr(0, 4) + " Gb/s");
  });
  if (!lab_up) return lab_up.error();
  const lab::lab_state& state = lab_up->state;
  const bool ours = lab_up->brought_up;

  auto measured = [&]() -> result<calibration> {
    virtual_backend_options vo;
    vo.lab_name = o.lab_name;
    vo.state_root = root;
    vo.rocelab_binary = binary;
    vo.keep_lab = true;
    vo.log_dir = o.log_dir;
    vo.capture = false;

    // Base RTT, send processing, receive processing, line rate, forwarding.
    const calibration_plan plan = make_calibration_plan(n, o.pings, spec.topology.link_gbps);
    calibration_workload load(plan);
    calibration_stamps stamps;
    for (std::uint32_t h = 0; h < n; ++h) stamps.hosts.push_back(state.hosts[h].name);
    status taken = status::success();
    vo.workload = &load;
    vo.on_fleet_result = [&](const nic::fleet_result& r) { taken = take_fleet_result(r, stamps); };
    step(o, "base RTT and line rate: " + std::to_string(2 * (n - 1)) + " pairs x " + std::to_string(o.pings) +
                " pings of 64 B, then " + std::to_string(n) + " flows of " +
                std::to_string(line_rate_flow_bytes(spec.topology.link_gbps) >> 10) + " KiB one at a time");
    auto ran = run_virtual(spec, 0, vo);
    if (!ran) return ran.error().with_context("the base RTT and line rate run");
    ROCELAB_RETURN_IF_ERROR(taken.with_context("the base RTT and line rate run"));
    if (!ran->lost_hosts.empty())
      return status(error_code::unavailable, "the base RTT and line rate run lost a NIC: " + ran->lost_hosts.front());
    std::size_t unfinished = 0;
    for (const auto& m : stamps.messages) unfinished += m.end_ns < 0 ? 1 : 0;
    if (unfinished > 0 || stamps.messages.size() != plan.messages.size())
      return status(error_code::unavailable, "the base RTT and line rate run ended with " +
                                                 std::to_string(unfinished + plan.messages.size() - stamps.messages.size()) +
                                                 " of its " + std::to_string(plan.messages.size()) +
                                                 " messages unfinished; see the NIC logs (--log-dir)");
    auto forwarding = read_forwarding(state.control_socket, n);
    if (!forwarding) return forwarding.error().with_context("the switch's forwarding latency");
    stamps.forwarding = std::move(*forwarding);

    // The CNP loop: a 2:1 incast with ECN, captured at the switch's egress mirror.
    if (o.cnp_loop && n >= 3) {
      const calibration_plan incast = make_incast_plan(n, o.incast_bytes);
      calibration_workload incast_load(incast);
      virtual_backend_options lo = vo;
      lo.workload = &incast_load;
      lo.on_fleet_result = nullptr;
      lo.capture = true;
      lo.capture_dpdk = false;  // the kernel's stamps, not a poll's (see the header)
      lo.capture_file = "/tmp/rocelab-calibrate-" + o.lab_name + "-" + std::to_string(::getpid()) + ".pcapng";
      step(o, "CNP loop: 2:1 incast of " + std::to_string(o.incast_bytes >> 10) +
                  " KiB each with ECN (16-128 KiB) into a port shaped to half rate, captured at the switch's "
                  "egress mirror");
      // The receiver's switch port at half the line rate for this run, put back right after
      // (the driver's snapshot). The soft NICs share the host's CPUs, and on a loaded host
      // two of them together may not exceed the receiver's line rate: the 2:1 incast then
      // never queued, marked or sent a CNP (a calibration with no CNP loop sample). Shaped,
      // the switch oversubscribes the port however far below line rate the host holds the
      // NICs. The loop itself (a marked frame's trip to the receiver from the mirror's stamp
      // of its departure, the receiver's notification point, the CNP's trip back) does not
      // depend on that port's pacing.
      auto shaper = fabric::drivers::soft_switch_driver::connect({state.control_socket});
      if (!shaper) return shaper.error().with_context("the CNP loop run: the switch");
      const auto half_rate = static_cast<std::int64_t>(std::llround(spec.topology.link_gbps * 1e9 / 2));
      ROCELAB_RETURN_IF_ERROR(
          (*shaper)
              ->apply_fields(json::array({{{"field", "rate_bps"}, {"value", half_rate}, {"port", incast.receiver}}}))
              .with_context("the CNP loop run: shaping the receiver's switch port"));
      auto loop_ran = run_virtual(loop_spec, 0, lo);
      const status restored = (*shaper)->restore();
      auto frames = loop_ran ? loop_frames_of(lo.capture_file) : result<std::vector<loop_frame>>(loop_ran.error());
      std::error_code ignored;
      std::filesystem::remove(lo.capture_file, ignored);
      ROCELAB_RETURN_IF_ERROR(restored.with_context("the CNP loop run: putting back the receiver's switch port"));
      if (!frames) return frames.error().with_context("the CNP loop run");
      stamps.cnp_loop_ns =
          cnp_loop_samples(*frames, static_cast<std::int64_t>(std::llround(spec.topology.link_gbps * 1e9)));
    }

    calibration c = measure_calibration(plan, stamps);
    if (o.under_load) {
      calibration_stamps loaded;
      loaded.hosts = stamps.hosts;
      virtual_backend_options wo = vo;
      wo.workload = nullptr;  // the spec's own
      wo.on_fleet_result = [&](const nic::fleet_result& r) { taken = take_fleet_result(r, loaded); };
      step(o, "under load: the spec's own workload (seed " + std::to_string(spec.seed) +
                  "), its NICs' delays");
      auto load_ran = run_virtual(spec, spec.seed, wo);
      if (!load_ran) return load_ran.error().with_context("the run under the spec's workload");
      ROCELAB_RETURN_IF_ERROR(taken.with_context("the run under the spec's workload"));
      take_delays_under_load(c, loaded);
    }
    c.lab = "virtual";
    c.taken_at = utc_now_iso8601();
    c.spec = spec.name;
    c.link_gbps = spec.topology.link_gbps;
    c.mtu_bytes = spec.nic.mtu_bytes;
    return c;
  }();
  if (ours && !o.keep_lab)
    if (auto st = lab::lab_down(o.lab_name, root); !st.ok())
      std::fprintf(stderr, "rocelab: taking down lab '%s': %s\n", o.lab_name.c_str(), st.message().c_str());
  return measured;
}

}  // namespace rocelab::experiments
