#pragma once
// Where a virtual lab run puts its soft switch and its soft NICs on this machine's CPUs.
//
// The switch runs SCHED_FIFO above the NICs and busy for the whole of an incast; a NIC
// left on the switch's CPU after its armed start waits behind it in the runqueue (tens of
// milliseconds measured on the 2-core VM), so the senders of one instant do not send
// alike: those sharing the switch's CPU fall behind, the others fill the queue first and
// are cut first, and the incast shares the port unevenly where the twin (and hardware,
// one NIC per host) shares it evenly (bench/README.md, "How the lab and the twin share an
// 8-to-1 incast"). So the switch gets a CPU of its own and the NICs the others, once their
// start is out (the start itself still spreads them over every CPU, nic_fleet.hpp
// start_cpus, at a priority above the switch's).

#include <optional>
#include <vector>

#include <sys/types.h>

namespace rocelab::experiments {

struct cpu_split {
  int switch_cpu = -1;
  std::vector<int> nic_cpus;
};

// The split of `cpus` (this process's, ascending): the switch on the last, the NICs on
// the rest; none with fewer than 2 CPUs (nothing to separate).
[[nodiscard]] std::optional<cpu_split> split_cpus(const std::vector<int>& cpus);

// Holds the split for its lifetime: every thread of the switch (`switch_pid`) on
// switch_cpu, and this process on nic_cpus, so the NIC processes it starts inherit them.
// The destructor puts both masks back (the switch may be a lab other runs use). A step
// the kernel refuses is left undone (the run goes on as it would have): `placed()` says
// whether both were placed when it was made.
class cpu_placement {
 public:
  cpu_placement(pid_t switch_pid, const cpu_split& split);
  cpu_placement(const cpu_placement&) = delete;
  cpu_placement& operator=(const cpu_placement&) = delete;
  ~cpu_placement();
  // This process back on its own CPUs (the NICs are started): the run's other threads
  // are not held to the NICs' CPUs. The switch stays placed.
  void release_self() noexcept;
  [[nodiscard]] bool placed() const noexcept { return placed_; }

 private:
  std::vector<std::pair<pid_t, std::vector<int>>> switch_threads_;  // tid, its CPUs before
  std::vector<int> self_before_;
  bool switch_placed_ = false, self_placed_ = false, placed_ = false;
};

}  // namespace rocelab::experiments
