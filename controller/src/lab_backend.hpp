#pragma once
// Backend lab: a resolved spec run on the agents of a real lab. The spec's workload runs on
// the inventory's first topology.hosts hosts, each host's traffic a verbs job on its agent
// (RC WRITE on its RDMA NIC). Before anything is set, a SONiC switch's config_db is read
// and the run refused unless the switch carries the spec's lossless class
// (experiments::switch_ready_for_run: PFC, DSCP map, ECN, the priority's PG and queue,
// no dropping PFC watchdog); rocelab does not write the switch for a lab run. Then the
// mlx5 hosts' DCQCN knobs are snapshotted and set through their agents; they are restored, newest first, whatever
// happens after (an error, a cancel, a lost agent).
//
// Contract: run_lab runs spec.repeats repeats (seeds spec.seed + r) and yields one
// run_records per repeat that ran, with backend "lab", flows and samples on the
// controller's timeline, and the hosts lost during a repeat in lost_hosts.
// request.on_repeat is told each repeat as it starts; request.cancel_requested is polled
// between repeats and by the fleet while one runs: true ends the run where it is with the
// repeats so far (the caller stores it interrupted). Errors: an agent not registered
// within 10 s, a NIC setting refused, a fleet that cannot start; the settings are
// restored before the error returns.
// Threading: blocks the calling thread (a run's thread, never the controller's io thread).
// Private to controller/src.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/controller/controller.hpp"
#include "rocelab/controller/inventory.hpp"
#include "rocelab/experiments/run/backend.hpp"
#include "rocelab/experiments/run/runner.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/protocol/messages.hpp"
#include "rocelab/traffic/soft_nic/nic_fleet.hpp"

namespace rocelab::controller {

// Opens the carrier of a fleet whose NICs are jobs of `kind` on the hosts' agents
// (controller::impl::open_agent_links): hosts, kind, one transport config per host, the
// store's run id, and how long each job may run before its agent ends it.
using agent_links_opener = std::function<result<std::unique_ptr<traffic::soft_nic::nic_links>>(
    const std::vector<traffic::soft_nic::fleet_host>&, protocol::job_kind, const std::vector<std::string>&,
    std::int64_t, std::chrono::milliseconds)>;

// What the lab backend uses of the controller.
struct lab_backend_context {
  const lab_inventory& inventory;  // the caller checked that the spec fits it
  controller& registry;            // wait_for_agents, apply_settings, restore_settings
  agent_links_opener open_links;
  std::function<void(const std::string&)> log;
  // The SONiC switch's config_db to check before T0: over ssh, else a dump file
  // (controller_options switch_ssh, switch_config_db); both empty on a SONiC inventory: the
  // run is refused.
  std::string switch_ssh;
  std::string switch_config_db;
};

// `run` is the store's id of the run, which the agents' jobs carry.
[[nodiscard]] result<experiments::experiment_result> run_lab(const experiments::experiment_spec& spec,
                                                             const run_request& request, std::int64_t run,
                                                             const lab_backend_context& lab);

// run_lab behind the backend seam, registered as "lab" in the registry of one run (its
// store id and the controller's context are the run's own). The context must outlive it.
class lab_backend final : public experiments::backend {
 public:
  lab_backend(const lab_backend_context& lab, std::int64_t run) : lab_(lab), run_(run) {}
  [[nodiscard]] result<experiments::experiment_result> run(const experiments::experiment_spec& spec,
                                                           const experiments::run_hooks& hooks) const override {
    run_request request;
    request.on_repeat = hooks.on_repeat;
    request.cancel_requested = hooks.cancel_requested;
    return run_lab(spec, request, run_, lab_);
  }

 private:
  const lab_backend_context& lab_;
  std::int64_t run_;
};

}  // namespace rocelab::controller
