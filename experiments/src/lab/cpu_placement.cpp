#include "rocelab/experiments/lab/cpu_placement.hpp"

#include <sched.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <system_error>

namespace rocelab::experiments {

namespace {

std::optional<std::vector<int>> cpus_of(pid_t tid) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(tid, sizeof set, &set) != 0) return std::nullopt;
  std::vector<int> out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

bool set_cpus(pid_t tid, const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus)
    if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
  return ::sched_setaffinity(tid, sizeof set, &set) == 0;
}

}  // namespace

std::optional<cpu_split> split_cpus(const std::vector<int>& cpus) {
  if (cpus.size() < 2) return std::nullopt;
  cpu_split s;
  s.switch_cpu = cpus.back();
  s.nic_cpus.assign(cpus.begin(), cpus.end() - 1);
  return s;
}

cpu_placement::cpu_placement(pid_t switch_pid, const cpu_split& split) {
  if (switch_pid > 0) {
    std::error_code ec;
    switch_placed_ = true;
    for (const auto& e :
         std::filesystem::directory_iterator("/proc/" + std::to_string(switch_pid) + "/task", ec)) {
      const auto tid = static_cast<pid_t>(std::atoi(e.path().filename().c_str()));
      auto before = cpus_of(tid);
      if (!before || !set_cpus(tid, {split.switch_cpu})) {
        switch_placed_ = false;
        continue;
      }
      switch_threads_.emplace_back(tid, std::move(*before));
    }
    if (ec || switch_threads_.empty()) switch_placed_ = false;
  }
  if (auto before = cpus_of(0); before && set_cpus(0, split.nic_cpus)) {
    self_before_ = std::move(*before);
    self_placed_ = true;
  }
  placed_ = switch_placed_ && self_placed_;
  if (!placed_)
    std::cerr << "rocelab: could not give the soft switch a CPU of its own (CPU " << split.switch_cpu
              << "); the NICs may share it\n";
}

void cpu_placement::release_self() noexcept {
  if (self_placed_) (void)set_cpus(0, self_before_);
  self_placed_ = false;
}

cpu_placement::~cpu_placement() {
  release_self();
  for (const auto& [tid, cpus] : switch_threads_) (void)set_cpus(tid, cpus);
}

}  // namespace rocelab::experiments
