#include "nic_process_report.hpp"

#include <sys/resource.h>

#include "rocelab/fabric/soft_switch/latency_histogram_json.hpp"
#include "rocelab/traffic/soft_nic/nic_process.hpp"

namespace rocelab::traffic::soft_nic {

std::int64_t process_cpu_ns() {
  rusage ru{};
  if (::getrusage(RUSAGE_SELF, &ru) != 0) return -1;
  return (static_cast<std::int64_t>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1'000'000 + ru.ru_utime.tv_usec +
          ru.ru_stime.tv_usec) *
         1000;
}

counters_event final_counters(const rc_nic& nic, fabric::soft_switch::packet_port& port, std::int64_t ready_cpu_ns,
                              const fabric::latency_histogram& rx_processing, const armed_start_counters& armed) {
  counters_event e{to_json(nic.counters())};
  nlohmann::json& c = e.counters;
  c["outstanding_messages"] = nic.outstanding_messages();
  c["port_kernel_drops"] = port.stats().kernel_drops;
  // The NIC's own CPU time since it was ready: the soft NICs share the CPUs they run on,
  // and how busy they kept them says how late a NIC may have answered.
  if (const std::int64_t now_cpu = process_cpu_ns(); now_cpu >= 0 && ready_cpu_ns >= 0)
    c["cpu_ns"] = now_cpu - ready_cpu_ns;
  c["port_tx_errors"] = port.stats().tx_errors;
  c["rx_processing"] = fabric::soft_switch::to_json(rx_processing);
  c["tx_lateness"] = fabric::soft_switch::to_json(nic.tx_lateness());
  c["armed_posts"] = armed.armed_posts;
  c["armed_arrived_late"] = armed.armed_arrived_late;
  c["armed_late_max_ns"] = armed.armed_late_max_ns;
  c["armed_boosts"] = armed.armed_boosts;
  c["armed_boosts_refused"] = armed.armed_boosts_refused;
  c["armed_pins"] = armed.armed_pins;
  c["armed_pins_refused"] = armed.armed_pins_refused;
  c["armed_warmups"] = armed.armed_warmups;
  const auto rp = nic.dcqcn_counters();
  c["dcqcn_rate_decreases"] = rp.rate_decreases;
  c["dcqcn_fast_recovery"] = rp.fast_recovery;
  c["dcqcn_additive_increase"] = rp.additive_increase;
  c["dcqcn_hyper_increase"] = rp.hyper_increase;
  return e;
}

}  // namespace rocelab::traffic::soft_nic
