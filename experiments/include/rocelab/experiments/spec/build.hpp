#pragma once
// From the spec to the objects a backend runs: the twin's config and the workload.

#include <cstdint>
#include <functional>
#include <memory>

#include "rocelab/common/result.hpp"
#include "rocelab/experiments/calibration/calibration.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/fabric/lossless_class.hpp"
#include "rocelab/fabric/twin/twin.hpp"

namespace rocelab::experiments {

// The twin config for one run with `seed` (repeat i: spec.seed + i). The switch template
// is the SONiC-style lossless profile the spec describes: PFC priorities lossless with
// dynamic_th and headroom, ECN (WRED profile) on switch.ecn.queues, lossless egress queues
// unlimited (the ingress PG does the accounting, as SONiC's egress_lossless_profile).
// The most ports any switch of the topology uses (hosts on a single switch; a leaf's hosts
// plus its uplinks, or a spine's leaves).
[[nodiscard]] std::uint32_t max_ports_per_switch(const topology_spec& t);

// With twin.calibration set, the config's lab timing is that calibration's
// (calibration/twin_timing.hpp), whatever the backend: a twin prediction of a lab's run
// (sim-to-real) models the lab it predicts; the labs themselves never read a twin config's
// lab timing.
[[nodiscard]] result<fabric::twin::twin_config> to_twin_config(const experiment_spec& spec, std::uint64_t seed);

// The calibration twin.calibration names: a file (relative to spec.base_dir) or its YAML
// inline. Errors name the field's origin, the field and the file. For a spec whose
// twin.calibration is set.
[[nodiscard]] result<calibration> calibration_of(const experiment_spec& spec);

// Each flow's ideal FCT (src, dst, bytes) on the spec's fabric, as the twin records it
// (fabric::twin::flow_ideal over to_twin_config): what the virtual and hardware labs record
// for their flows, so a slowdown compares across backends. For a valid spec; an invalid
// one gives 0 (not known).
[[nodiscard]] std::function<std::int64_t(std::uint32_t, std::uint32_t, std::uint64_t)> ideal_fct_of(
    const experiment_spec& spec);

// The lossless RoCE class of the spec (nic.data_priority, nic.data_dscp, the CNP's
// nic.dcqcn.cnp_dscp and cnp_802p_prio, switch.pfc.enabled): what the NICs send with and
// the switch maps and pauses, on every backend. Errors name the spec field.
[[nodiscard]] result<fabric::lossless_class> lossless_class_of(const experiment_spec& spec);

// The spec's workloads (one, or a composite of several) for one run with `seed`.
// Reads a user CDF file and a flow list file (relative to spec.base_dir).
[[nodiscard]] result<std::unique_ptr<fabric::twin::workload>> make_workload(const experiment_spec& spec,
                                                                            std::uint64_t seed);

}  // namespace rocelab::experiments
