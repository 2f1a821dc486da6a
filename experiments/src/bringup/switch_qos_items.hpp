#pragma once
// The checklist's switch items for the data priority's path through a SONiC switch's QoS
// maps and for the PFC watchdog (bringup_check.hpp lists them). Pure: facts in, items out.
// Private to experiments/src/bringup.

#include <string>
#include <vector>

#include "rocelab/experiments/bringup/bringup_check.hpp"

namespace rocelab::experiments::bringup_items {

// priority_group: the data priority's TC goes to a PG that has a lossless buffer and that
// a PFC frame of the priority pauses.
[[nodiscard]] check_item priority_group_item(const bringup_expectation& want, const switch_facts& sw,
                                             const std::string& target, const std::vector<std::string>& ports);
// pfc_queue: a PFC frame of the data priority pauses the queue the priority's TC is sent on.
[[nodiscard]] check_item pfc_queue_item(const bringup_expectation& want, const switch_facts& sw,
                                        const std::string& target, const std::vector<std::string>& ports);
// pfc_watchdog: no watchdog that drops or forwards the lossless queue on the hosts' ports.
[[nodiscard]] check_item pfc_watchdog_item(const bringup_expectation& want, const switch_facts& sw,
                                           const std::string& target, const std::vector<std::string>& ports);

}  // namespace rocelab::experiments::bringup_items
