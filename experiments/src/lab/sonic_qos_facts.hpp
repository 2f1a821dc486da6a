#pragma once
// The facts of a SONiC config_db dump that the switch QoS, watchdog and mirror items read
// (bringup_check.hpp switch_facts: qos_maps, lossless_pgs, pfc_watchdog, mirror_settings,
// port_memberships). Pure. Private to experiments/src/lab.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rocelab/experiments/bringup/bringup_check.hpp"

namespace rocelab::experiments {

// Fills those fields of `f` for `ports` from `config_db`, as `sonic-cfggen -d --print-data`
// prints it (references plain or bracketed "[TABLE|name]"). A table the dump does not hold
// leaves its fact unknown, never empty.
void add_sonic_qos_facts(const nlohmann::json& config_db, const std::vector<std::string>& ports, switch_facts& f);

}  // namespace rocelab::experiments
