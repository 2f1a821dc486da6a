#include "rocelab/protocol/run_clock.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace rocelab::protocol {

namespace {

std::string us(double ns) { return std::to_string(static_cast<std::int64_t>(std::llround(ns / 1000))) + " us"; }

// Why this agent's host offset cannot be used, or empty.
std::string host_refusal(const agent_clock_inputs& a, const clock_estimate& e, const controller_host_clock& c) {
  if (!a.host) return a.agent + " reports no host clock";
  if (a.host->source != "ptp" && a.host->source != "ntp")
    return a.agent + "'s host clock is not synchronised" + (a.host->detail.empty() ? "" : " (" + a.host->detail + ")");
  const double disagreement = std::abs(a.host->offset_ns - e.offset_ns);
  const double allowed = e.uncertainty_ns + a.host->error_bound_ns + c.error_bound_ns;
  if (disagreement > allowed)
    return a.agent + "'s host clock disagrees with the probes by " + us(disagreement) + ", beyond the " + us(allowed) +
           " their bounds allow (not the controller's timescale)";
  return {};
}

}  // namespace

std::int64_t agent_clock_map::to_agent(std::int64_t controller_ns) const {
  return controller_ns + static_cast<std::int64_t>(std::llround(offset_ns));
}

std::int64_t agent_clock_map::to_controller(std::int64_t agent_ns) const {
  return agent_ns - static_cast<std::int64_t>(std::llround(offset_ns));
}

result<run_clock> choose_run_clock(const std::vector<agent_clock_inputs>& agents, const controller_host_clock& controller) {
  for (const auto& a : agents)
    if (!a.estimate) return status(error_code::unavailable, "agent " + a.agent + ": no clock estimate yet");
  std::string reason;
  if (!controller.synchronised)
    reason = "the controller's host clock is not synchronised" + (controller.detail.empty() ? "" : " (" + controller.detail + ")");
  for (const auto& a : agents) {
    if (!reason.empty()) break;
    reason = host_refusal(a, *a.estimate, controller);
  }
  if (reason.empty() && !agents.empty()) {
    // Usable host clocks are still used only when their bound is the tighter one: an ntp
    // host's bound is the kernel's maxerror, which grows 500 us/s between the daemon's
    // updates (adjtimex(2)) and is often milliseconds, where the probes bound the estimate
    // to tens of microseconds on a LAN. The run's uncertainty is its largest agent's either way.
    const auto loosest = std::max_element(agents.begin(), agents.end(), [](const auto& x, const auto& y) {
      return x.host->error_bound_ns < y.host->error_bound_ns;
    });
    double estimate_worst = 0;
    for (const auto& a : agents) estimate_worst = std::max(estimate_worst, a.estimate->uncertainty_ns);
    if (loosest->host->error_bound_ns > estimate_worst)
      reason = "the host clocks' bound, " + us(loosest->host->error_bound_ns) + " (" + loosest->agent + "'s " +
               loosest->host->source + "), is looser than rocelab's estimate's, " + us(estimate_worst);
  }
  run_clock out;
  if (reason.empty() && !agents.empty()) {
    std::set<std::string> sources;
    for (const auto& a : agents) {
      sources.insert(a.host->source);
      out.agents.push_back({a.agent, a.host->offset_ns, a.host->error_bound_ns});
    }
    for (const auto& s : sources) out.source += (out.source.empty() ? "" : "+") + s;
  } else {
    out.source = "estimate";
    out.reason = agents.empty() ? "no agents" : reason;
    for (const auto& a : agents) out.agents.push_back({a.agent, a.estimate->offset_ns, a.estimate->uncertainty_ns});
  }
  for (const auto& m : out.agents) out.uncertainty_ns = std::max(out.uncertainty_ns, m.uncertainty_ns);
  return out;
}

}  // namespace rocelab::protocol
