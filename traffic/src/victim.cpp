#include "rocelab/traffic/victim.hpp"

#include <algorithm>
#include <string>

#include "rocelab/traffic/message_list.hpp"

namespace rocelab::traffic {
namespace {

using fabric::twin::message;

status bad(const std::string& what) { return {error_code::invalid_argument, what}; }

status check_list(const std::vector<std::uint32_t>& list, const char* field, std::uint32_t hosts) {
  std::vector<bool> seen(hosts, false);
  for (std::uint32_t h : list) {
    if (h >= hosts) return bad(std::string(field) + ": " + std::to_string(h) + " is not a host");
    if (seen[h]) return bad(std::string(field) + ": " + std::to_string(h) + " listed twice");
    seen[h] = true;
  }
  return status::success();
}

}  // namespace

result<victim_hosts> resolve_victim_hosts(const victim_config& cfg, const incast_config* incast, std::uint32_t hosts,
                                          std::uint64_t seed) {
  if (cfg.flow_bytes == 0) return bad("flow_bytes: must be > 0");
  if (cfg.flows_per_sender == 0) return bad("flows_per_sender: must be >= 1");
  if (cfg.start_ns < 0) return bad("start_ns: negative");
  if (cfg.gap_ns < 0) return bad("gap_ns: negative");
  if (cfg.priority < -1 || cfg.priority > 7) return bad("priority: must be 0..7 (or -1 for the NIC's)");
  ROCELAB_RETURN_IF_ERROR(check_list(cfg.hosts, "hosts", hosts));
  ROCELAB_RETURN_IF_ERROR(check_list(cfg.receivers, "receivers", hosts));

  victim_hosts out;
  std::vector<std::uint32_t> incast_side;  // the incast's senders
  if (incast != nullptr) incast_side = incast_senders(*incast, hosts, seed);
  if (!cfg.hosts.empty()) {
    out.senders = cfg.hosts;
  } else if (incast != nullptr) {
    out.senders = incast_side;
  } else {
    return bad("hosts: the run has no incast to take the senders from; list them");
  }
  if (!cfg.receivers.empty()) {
    out.receivers = cfg.receivers;
    if (incast != nullptr)
      for (std::uint32_t h : out.receivers)
        if (h == incast->receiver)
          return bad("receivers: " + std::to_string(h) + " is the incast's receiver, whose port is the congested one");
  } else {
    if (incast == nullptr) return bad("receivers: the run has no incast to keep them apart from; list them");
    for (std::uint32_t h = 0; h < hosts; ++h)
      if (h != incast->receiver && std::find(incast_side.begin(), incast_side.end(), h) == incast_side.end())
        out.receivers.push_back(h);
    if (out.receivers.empty())
      return bad("receivers: every host is the incast's receiver or one of its senders; add hosts or list receivers");
  }
  // Each sender needs a receiver other than itself.
  for (std::uint32_t s : out.senders)
    if (std::none_of(out.receivers.begin(), out.receivers.end(), [s](std::uint32_t r) { return r != s; }))
      return bad("receivers: sender " + std::to_string(s) + " has no receiver other than itself");
  return out;
}

result<std::vector<message>> victim_messages(const victim_config& cfg, const incast_config* incast,
                                             std::uint32_t hosts, std::uint64_t seed) {
  auto ends = resolve_victim_hosts(cfg, incast, hosts, seed);
  if (!ends) return ends.error();
  const auto& senders = ends->senders;
  const auto& receivers = ends->receivers;
  std::vector<message> out;
  out.reserve(senders.size() * cfg.flows_per_sender);
  for (std::uint32_t k = 0; k < cfg.flows_per_sender; ++k)
    for (std::size_t i = 0; i < senders.size(); ++i) {
      std::size_t r = (i + k) % receivers.size();
      while (receivers[r] == senders[i]) r = (r + 1) % receivers.size();
      message m;
      m.src = senders[i];
      m.dst = receivers[r];
      m.bytes = cfg.flow_bytes;
      m.start_ns = cfg.start_ns + static_cast<std::int64_t>(k) * cfg.gap_ns;
      m.kind = workload_kind::victim;
      m.priority = cfg.priority;
      m.tag = (static_cast<std::uint64_t>(k) << 32) | i;
      out.push_back(m);
    }
  return out;
}

result<std::unique_ptr<fabric::twin::workload>> make_victims(const victim_config& cfg, const incast_config* incast,
                                                             std::uint32_t hosts, std::uint64_t seed) {
  auto messages = victim_messages(cfg, incast, hosts, seed);
  if (!messages) return messages.error();
  return std::unique_ptr<fabric::twin::workload>(std::make_unique<message_list_workload>(std::move(*messages)));
}

}  // namespace rocelab::traffic
