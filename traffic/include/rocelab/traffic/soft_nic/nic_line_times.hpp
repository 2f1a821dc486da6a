#pragma once
// The instants a soft NIC's lines carry (nic_process.hpp), moved from one clock to
// another by the carriers that relay them (the controller for agents, an agent for its
// NIC process). Commands carry "at_ns" (an armed post's instant); events carry "t_ns",
// "start_ns", "first_tx_ns", "last_tx_ns" and "end_ns". `map` gets each present integer field and returns its value
// on the other clock; other fields, and lines that are not JSON objects, are unchanged.

#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace rocelab::traffic::soft_nic {

using clock_map = std::function<std::int64_t(std::int64_t)>;

void map_command_times(nlohmann::json& command, const clock_map& map);
void map_event_times(nlohmann::json& event, const clock_map& map);

// The same on a line's text; a line without the fields comes back as it was, unparsed.
[[nodiscard]] std::string map_command_times(const std::string& line, const clock_map& map);
[[nodiscard]] std::string map_event_times(const std::string& line, const clock_map& map);

}  // namespace rocelab::traffic::soft_nic
