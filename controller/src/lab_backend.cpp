#include "lab_backend.hpp"

#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

#include "rocelab/experiments/bringup/bringup_check.hpp"
#include "rocelab/experiments/lab/bringup_facts.hpp"
#include "rocelab/experiments/run/start_skew.hpp"
#include "rocelab/experiments/spec/build.hpp"
#include "rocelab/experiments/tuning/exports.hpp"
#include "rocelab/experiments/lab/virtual_backend.hpp"

namespace rocelab::controller {
namespace {

// The switch's part of the lab, read and judged before T0 (see lab_backend.hpp).
status check_switch_before_t0(const experiments::experiment_spec& spec, const lab_backend_context& lab) {
  const lab_inventory& inv = lab.inventory;
  const std::string context = "backend lab: checking switch " + inv.switch_name + " before T0";
  if (inv.switch_driver != "sonic") return status::success();
  std::vector<std::string> ports;
  experiments::bringup_inventory binv;
  binv.switch_name = inv.switch_name;
  binv.switch_driver = inv.switch_driver;
  for (const auto& h : inv.hosts) {
    binv.hosts.push_back({h.name, h.nic_device, h.nic_driver, h.nic_ip, h.switch_port});
    if (std::find(ports.begin(), ports.end(), h.switch_port) == ports.end()) ports.push_back(h.switch_port);
  }
  experiments::switch_facts sw;
  if (!lab.switch_ssh.empty()) {
    fabric::drivers::sonic_options o;
    o.host = lab.switch_ssh;
    sw = experiments::read_sonic_switch_facts(std::move(o), inv.switch_name, ports);
  } else if (!lab.switch_config_db.empty()) {
    std::ifstream in(lab.switch_config_db);
    const auto db = nlohmann::json::parse(in, nullptr, false);
    if (!in.is_open() || db.is_discarded())
      return status(error_code::malformed_input, context + ": " + lab.switch_config_db + " is not a config_db JSON dump");
    auto facts = experiments::sonic_switch_facts(db, inv.switch_name, ports);
    if (!facts) return facts.error().with_context(context + " (" + lab.switch_config_db + ")");
    sw = std::move(*facts);
  } else {
    return status(error_code::unavailable,
                  context + ": no way to read it (start the controller with --switch-ssh admin@SWITCH or "
                            "--switch-config-db FILE); rocelab does not set the switch for a lab run, and a run on an "
                            "unchecked switch may be lossy without saying so");
  }
  if (!sw.unavailable.empty()) return status(error_code::unavailable, context + ": " + sw.unavailable);
  auto cls = experiments::lossless_class_of(spec);
  if (!cls) return cls.error().with_context(context);
  experiments::bringup_expectation want;
  want.lossless = *cls;
  want.ecn = spec.sw.ecn.enabled;
  return experiments::switch_ready_for_run(want, binv, sw).with_context("backend lab");
}

}  // namespace

result<experiments::experiment_result> run_lab(const experiments::experiment_spec& spec, const run_request& request,
                                               std::int64_t run, const lab_backend_context& lab) {
  namespace nic = traffic::soft_nic;
  const lab_inventory& inv = lab.inventory;
  std::vector<nic::fleet_host> hosts;
  std::vector<std::string> names;
  for (std::uint32_t i = 0; i < spec.topology.hosts; ++i) {
    const auto& h = inv.hosts[i];
    nic::fleet_host f;
    f.name = h.name;
    f.ifname = h.nic_device;
    auto ip = nic::parse_ipv4(h.nic_ip);
    if (!ip) return ip.error().with_context("inventory host " + h.name);
    f.address.ip = *ip;
    hosts.push_back(f);
    names.push_back(h.name);
  }
  if (!lab.registry.wait_for_agents(names, std::chrono::seconds(10), 1))
    return status(error_code::unavailable, "backend lab: not every host's agent is registered (" +
                                               std::to_string(names.size()) + " hosts: " + names.front() + "...)");
  ROCELAB_RETURN_IF_ERROR(check_switch_before_t0(spec, lab));
  // Snapshot and set the NICs' DCQCN knobs; restored whatever happens below.
  std::vector<std::string> applied;
  // Newest first, as every snapshot is undone.
  const auto restore_all = [&] {
    for (auto a = applied.rbegin(); a != applied.rend(); ++a)
      if (auto r = lab.registry.restore_settings(*a, std::chrono::seconds(10)); !r)
        lab.log("restoring the NIC settings of " + *a + ": " + r.error().message());
  };
  for (std::uint32_t i = 0; i < hosts.size(); ++i) {
    if (inv.hosts[i].nic_driver != "mlx5") continue;
    std::vector<protocol::setting> settings;
    for (const auto& [name, value] : experiments::mlx5_knob_values(spec))
      settings.push_back({inv.hosts[i].nic_device, name, value});
    auto prev = lab.registry.apply_settings(names[i], "mlx5", settings, std::chrono::seconds(10));
    applied.push_back(names[i]);  // a failed apply may have changed some: restore it too
    if (!prev) {
      restore_all();
      return prev.error().with_context("backend lab: NIC settings of " + names[i]);
    }
  }
  experiments::experiment_result out;
  status failure;
  for (std::uint32_t r = 0; r < spec.repeats && failure.ok(); ++r) {
    if (r > 0 && request.cancel_requested && request.cancel_requested()) break;
    const std::uint64_t seed = spec.seed + r;
    if (request.on_repeat) request.on_repeat(r, seed);
    auto load = experiments::make_workload(spec, seed);
    if (!load) {
      failure = load.error();
      break;
    }
    nic::fleet_options fo;
    fo.nic.line_rate_bps = static_cast<std::int64_t>(spec.topology.link_gbps * 1e9);
    fo.nic.mtu_bytes = spec.nic.mtu_bytes;
    fo.ideal_fct_ns = experiments::ideal_fct_of(spec);
    auto cls = experiments::lossless_class_of(spec);
    if (!cls) {
      failure = cls.error();
      break;
    }
    fo.nic.data_priority = cls->data_priority;
    fo.nic.data_dscp = cls->data_dscp;
    const auto limit = experiments::virtual_run_limit(spec);
    fo.links = [&](const std::vector<nic::fleet_host>& fh, const std::vector<nic::nic_process_config>&) {
      std::vector<std::string> configs;
      for (std::uint32_t i = 0; i < fh.size(); ++i)
        configs.push_back(nlohmann::json{{"host", i},
                                         {"hosts", fh.size()},
                                         {"netdev", fh[i].ifname},
                                         {"local_ip", inv.hosts[i].nic_ip},
                                         {"mtu", spec.nic.mtu_bytes},
                                         {"buffer_bytes", 1 << 20},
                                         {"tx_depth", 64},
                                         {"data_dscp", cls->data_dscp},
                                         {"data_priority", cls->data_priority}}
                              .dump());
      return lab.open_links(fh, protocol::job_kind::verbs, configs, run, 2 * limit + std::chrono::milliseconds(60'000));
    };
    auto fleet = nic::nic_fleet::start(hosts, fo);
    if (!fleet) {
      failure = fleet.error().with_context("backend lab: starting the verbs jobs");
      break;
    }
    auto ran = (*fleet)->run(**load, limit, request.cancel_requested);
    if (!ran) {
      failure = ran.error();
      break;
    }
    run_records rec = std::move(ran->records);
    rec.backend = "lab";
    rec.lost_hosts = ran->lost_hosts;
    // Each host's start is in its own clock, mapped onto the controller's through the run's
    // clock (host clocks or the estimate): its uncertainty adds to the skew the offsets show.
    std::int64_t clock_uncertainty_ns = 0;
    if (auto clock = lab.registry.clock_of_run(run)) {
      clock_uncertainty_ns = static_cast<std::int64_t>(clock->uncertainty_ns);
      rec.start_clock = clock->source;
      rec.start_clock_uncertainty_ns = clock_uncertainty_ns;
      if (!clock->reason.empty()) lab.log("run " + std::to_string(run) + ": rocelab's clock estimate (" + clock->reason + ")");
    }
    if (auto skew = experiments::start_skew_violation(rec, spec.timing.max_start_skew_ns, clock_uncertainty_ns);
        !skew.empty())
      rec.degraded.push_back(std::move(skew));
    out.seeds.push_back(seed);
    out.repeats.push_back(std::move(rec));
  }
  restore_all();
  if (!failure.ok()) return failure;
  return out;
}

}  // namespace rocelab::controller
