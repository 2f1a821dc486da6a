#include "rocelab/controller/trial_result_check.hpp"

#include <string>

namespace rocelab::controller {

namespace {

status refused(const std::string& what) { return {error_code::invalid_argument, what}; }

bool time_ok(std::int64_t t) { return t >= 0 && t <= max_result_time_ns; }

std::string at(std::size_t repeat, const char* table, std::size_t i) {
  return "repeat " + std::to_string(repeat) + ", " + table + "[" + std::to_string(i) + "]";
}

status check_records(const run_records& r, std::size_t repeat) {
  const auto hosts = r.hosts.size();
  const auto devices = r.devices.size();
  if (!time_ok(r.simulated_ns))
    return refused("repeat " + std::to_string(repeat) + ": simulated_ns " + std::to_string(r.simulated_ns) +
                   " out of range");
  for (std::size_t i = 0; i < r.flows.size(); ++i) {
    const flow_record& f = r.flows[i];
    const auto where = at(repeat, "flows", i);
    if (f.src >= hosts || f.dst >= hosts) return refused(where + ": host index past the host table");
    if (!time_ok(f.start_ns)) return refused(where + ": start_ns " + std::to_string(f.start_ns) + " out of range");
    if (f.ideal_fct_ns < 0 || f.ideal_fct_ns > max_result_time_ns)
      return refused(where + ": ideal_fct_ns " + std::to_string(f.ideal_fct_ns) + " out of range");
    if (!f.completed()) {
      if (f.end_ns != -1 || f.fct_ns != -1) return refused(where + ": not completed (end_ns -1) but fct_ns set");
      continue;
    }
    if (!time_ok(f.end_ns) || f.end_ns < f.start_ns)
      return refused(where + ": end_ns " + std::to_string(f.end_ns) + " out of range or before start_ns");
    if (f.fct_ns != f.end_ns - f.start_ns)
      return refused(where + ": fct_ns " + std::to_string(f.fct_ns) + " is not end_ns - start_ns");
    if (f.ideal_fct_ns > 0 && f.fct_ns < f.ideal_fct_ns / 2)
      return refused(where + ": fct_ns " + std::to_string(f.fct_ns) + " below half its ideal " +
                     std::to_string(f.ideal_fct_ns));
  }
  for (std::size_t i = 0; i < r.pauses.size(); ++i) {
    const pause_interval& p = r.pauses[i];
    if (p.device >= devices) return refused(at(repeat, "pauses", i) + ": device index past the device table");
    if (!time_ok(p.start_ns) || !time_ok(p.end_ns) || p.end_ns < p.start_ns)
      return refused(at(repeat, "pauses", i) + ": times out of range or ending before they start");
  }
  for (std::size_t i = 0; i < r.counters.size(); ++i)
    if (!time_ok(r.counters[i].t_ns) || r.counters[i].device >= devices)
      return refused(at(repeat, "counters", i) + ": t_ns or device out of range");
  for (std::size_t i = 0; i < r.queues.size(); ++i)
    if (!time_ok(r.queues[i].t_ns) || r.queues[i].device >= devices)
      return refused(at(repeat, "queues", i) + ": t_ns or device out of range");
  for (std::size_t i = 0; i < r.events.size(); ++i)
    if (!time_ok(r.events[i].t_ns) || r.events[i].device >= devices)
      return refused(at(repeat, "events", i) + ": t_ns or device out of range");
  for (std::size_t i = 0; i < r.allreduce.size(); ++i)
    if (!time_ok(r.allreduce[i].time_ns)) return refused(at(repeat, "allreduce", i) + ": time_ns out of range");
  if (!time_ok(r.totals.paused_ns)) return refused("repeat " + std::to_string(repeat) + ": totals.paused_ns out of range");
  return status::success();
}

}  // namespace

status check_trial_result(const protocol::trial_result& r, const trial_work& expected) {
  if (!r.error.empty()) {
    if (!r.repeats.empty()) return refused("a failed trial carries " + std::to_string(r.repeats.size()) + " repeats");
    return status::success();
  }
  if (r.repeats.size() != expected.repeats)
    return refused(std::to_string(r.repeats.size()) + " repeats for a spec of repeats: " +
                   std::to_string(expected.repeats));
  for (std::size_t i = 0; i < r.repeats.size(); ++i) {
    const protocol::trial_repeat& rep = r.repeats[i];
    if (rep.index != i || rep.seed != expected.seed + i)
      return refused("repeat " + std::to_string(i) + " has index " + std::to_string(rep.index) + " and seed " +
                     std::to_string(rep.seed) + "; the spec's is seed " + std::to_string(expected.seed + i));
    if (auto st = check_records(rep.records, i); !st.ok()) return st;
  }
  return status::success();
}

std::size_t record_bytes(const protocol::trial_result& r) {
  std::size_t n = sizeof r + r.repeats.size() * sizeof(protocol::trial_repeat);
  for (const auto& rep : r.repeats) {
    const run_records& x = rep.records;
    n += (x.hosts.size() + x.devices.size() + x.lost_hosts.size() + x.degraded.size()) * sizeof(std::string) +
         x.flows.size() * sizeof(flow_record) + x.pauses.size() * sizeof(pause_interval) +
         x.counters.size() * sizeof(counter_sample) + x.queues.size() * sizeof(queue_sample) +
         x.allreduce.size() * sizeof(allreduce_result) + x.events.size() * sizeof(congestion_event);
  }
  return n;
}

std::size_t string_bytes(const protocol::trial_result& r) {
  std::size_t n = r.error.size();
  for (const auto& rep : r.repeats) {
    const run_records& x = rep.records;
    n += x.backend.size();
    for (const auto& s : x.hosts) n += s.size();
    for (const auto& s : x.devices) n += s.size();
    for (const auto& c : x.counters) n += c.name.size();
    for (const auto& a : x.allreduce) n += a.algorithm.size();
    for (const auto& s : x.lost_hosts) n += s.size();
    for (const auto& s : x.degraded) n += s.size();
    for (const auto& [k, v] : x.start_offsets_ns) n += sizeof v + k.size() + 32;
  }
  return n;
}

std::size_t held_bytes(const protocol::trial_result& r) { return 2 * record_bytes(r) + string_bytes(r); }

}  // namespace rocelab::controller
