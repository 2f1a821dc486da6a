#pragma once
// The NIC process's last event: its counters line (nic_process.hpp "counters"), and the
// process CPU time it reports.
#include <cstdint>

#include "nic_post_scheduler.hpp"
#include "rocelab/fabric/latency_histogram.hpp"
#include "rocelab/fabric/soft_switch/packet_port.hpp"
#include "rocelab/traffic/soft_nic/nic_channel.hpp"
#include "rocelab/traffic/soft_nic/rc_nic.hpp"

namespace rocelab::traffic::soft_nic {

// This process's CPU time, user and system, in ns; -1 when the kernel will not say.
[[nodiscard]] std::int64_t process_cpu_ns();

// The counters line: the NIC's counters and outstanding messages, the port's kernel drops
// and transmit errors, "cpu_ns" (the process's CPU time since `ready_cpu_ns`, absent when
// either reading failed), the receive processing histogram, the armed starts' counters
// and the DCQCN reaction point's. Reads the port's statistics and the CPU time now.
[[nodiscard]] counters_event final_counters(const rc_nic& nic, fabric::soft_switch::packet_port& port,
                                            std::int64_t ready_cpu_ns, const fabric::latency_histogram& rx_processing,
                                            const armed_start_counters& armed);

}  // namespace rocelab::traffic::soft_nic
