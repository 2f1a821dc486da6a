// What the host gives a virtual lab's real-time loops, measured the way the soft NIC and
// the soft switch use it: the cost of a system call, how late a sleep until a frame time
// ahead wakes (clock_nanosleep, ppoll, and yielding until the instant), how long a thread
// blocked on a descriptor takes to run after another CPU wakes it, and how long a thread
// spinning on its CPU goes without running (a hypervisor's vCPU preemption). Each is the
// floor under the lab's pacing, PFC reaction and CNP loop on this host: a sleep that wakes
// a large part of a frame time late makes a soft NIC send in pairs; a wake-up late by
// milliseconds keeps frames in the switch's receive ring past its PFC reaction budget.
// Bounded: every loop has a fixed count. SCHED_FIFO when permitted (the lab runs its NICs
// and switch at SCHED_FIFO 40 and 50), the default policy otherwise (said in the output).
//   build/bench/bench_host_timing [--gbps 0.5] [--mtu 4096] [--samples 3000] [--spin-seconds 2]
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "rocelab/common/realtime_section.hpp"

namespace {

std::int64_t now_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1'000'000'000LL + t.tv_nsec;
}

timespec at(std::int64_t ns) { return {static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)}; }

bool on_cpu(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  return ::sched_setaffinity(0, sizeof s, &s) == 0;
}

void print(const std::string& what, std::vector<std::int64_t> v) {
  std::printf("| %s | %zu | ", what.c_str(), v.size());
  if (v.empty()) {
    std::printf("- | - | - | - |\n");
    return;
  }
  std::sort(v.begin(), v.end());
  const auto us = [&](double f) {
    return static_cast<double>(v[static_cast<std::size_t>(f * static_cast<double>(v.size() - 1))]) / 1000.0;
  };
  std::printf("%.1f | %.1f | %.1f | %.1f |\n", us(0.5), us(0.9), us(0.99), us(1.0));
}

enum class sleeper { nanosleep, ppoll, yield };

// Lateness of a wake-up `gap_ns` after the previous due instant, `n` times.
std::vector<std::int64_t> sleep_lateness(sleeper how, std::int64_t gap_ns, int n) {
  std::vector<std::int64_t> late;
  late.reserve(static_cast<std::size_t>(n));
  std::int64_t due = now_ns() + gap_ns;
  for (int i = 0; i < n; ++i) {
    if (how == sleeper::nanosleep) {
      const timespec ts = at(due);
      ::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
    } else if (how == sleeper::ppoll) {
      const std::int64_t wait = std::max<std::int64_t>(0, due - now_ns());
      const timespec ts = at(wait);
      ::ppoll(nullptr, 0, &ts, nullptr);
    } else {
      while (now_ns() < due) ::sched_yield();
    }
    const std::int64_t t = now_ns();
    late.push_back(t - due);
    due = std::max(due + gap_ns, t);  // a late wake-up does not make the next one early
  }
  return late;
}

// A thread on `sleeper_cpu` blocked in ppoll on an eventfd, woken by a write from
// `waker_cpu` every `every_ns` (long enough for the sleeper's CPU to go idle).
std::vector<std::int64_t> wake_latency(int sleeper_cpu, int waker_cpu, int n, std::int64_t every_ns, int priority) {
  const int efd = ::eventfd(0, EFD_CLOEXEC);
  std::atomic<std::int64_t> stamp{0};
  std::vector<std::int64_t> lat;
  lat.reserve(static_cast<std::size_t>(n));
  std::thread sleeper_thread([&] {
    (void)on_cpu(sleeper_cpu);
    (void)rocelab::set_thread_priority(priority);
    for (int i = 0; i < n; ++i) {
      pollfd p{efd, POLLIN, 0};
      if (::poll(&p, 1, 1000) <= 0) break;  // a lost wake-up ends the measurement, bounded
      const std::int64_t t = now_ns();
      std::uint64_t v = 0;
      (void)!::read(efd, &v, sizeof v);
      lat.push_back(t - stamp.load());
    }
  });
  (void)on_cpu(waker_cpu);
  for (int i = 0; i < n; ++i) {
    const timespec ts = at(every_ns);
    ::nanosleep(&ts, nullptr);
    stamp = now_ns();
    const std::uint64_t one = 1;
    (void)!::write(efd, &one, sizeof one);
  }
  sleeper_thread.join();
  ::close(efd);
  return lat;
}

// Gaps over 20 us between two clock reads of a thread spinning on `cpu` for `seconds`.
std::vector<std::int64_t> spin_gaps(int cpu, double seconds) {
  std::vector<std::int64_t> gaps;
  (void)on_cpu(cpu);
  const std::int64_t end = now_ns() + static_cast<std::int64_t>(seconds * 1e9);
  std::int64_t last = now_ns();
  for (std::int64_t t = last; t < end; t = now_ns()) {
    if (t - last > 20'000) gaps.push_back(t - last);
    last = t;
  }
  return gaps;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The host's timing floor under a virtual lab's real-time loops"};
  double gbps = 0.5, spin_seconds = 2;
  int mtu = 4096, samples = 3000;
  app.add_option("--gbps", gbps, "the lab's link rate, for the frame time")->check(CLI::PositiveNumber);
  app.add_option("--mtu", mtu, "the RoCE MTU, for the frame time")->check(CLI::Range(256, 9000));
  app.add_option("--samples", samples, "wake-ups per measurement")->check(CLI::Range(10, 1'000'000));
  app.add_option("--spin-seconds", spin_seconds, "how long each CPU is spun on")->check(CLI::Range(0.1, 60.0));
  CLI11_PARSE(app, argc, argv);

  cpu_set_t mine;
  CPU_ZERO(&mine);
  (void)::sched_getaffinity(0, sizeof mine, &mine);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &mine)) cpus.push_back(c);
  // A middle packet of a RoCE WRITE on the wire: the MTU's payload, 58 B of Ethernet, IPv4,
  // UDP, BTH and ICRC, the 4 B FCS, and 20 B of preamble and inter-frame gap.
  const auto frame_ns = static_cast<std::int64_t>((mtu + 82) * 8 / gbps);
  const int cpu = cpus.back();
  (void)on_cpu(cpu);
  const bool rt = rocelab::set_thread_priority(40);
  std::printf("host timing: CPUs %zu, measured on CPU %d at %s; frame time %.1f us (%d B MTU at %g Gb/s)\n\n",
              cpus.size(), cpu, rt ? "SCHED_FIFO 40" : "the default policy (SCHED_FIFO refused)",
              static_cast<double>(frame_ns) / 1000.0, mtu, gbps);
  std::printf("| measurement | n | p50 us | p90 us | p99 us | max us |\n| --- | --- | --- | --- | --- | --- |\n");

  std::vector<std::int64_t> sc;
  for (int i = 0; i < samples; ++i) {
    const std::int64_t t = now_ns();
    (void)::syscall(SYS_getppid);
    sc.push_back(now_ns() - t);
  }
  print("a system call (getppid)", sc);
  print("clock_nanosleep to a frame time ahead: lateness", sleep_lateness(sleeper::nanosleep, frame_ns, samples));
  print("ppoll for a frame time: lateness", sleep_lateness(sleeper::ppoll, frame_ns, samples));
  print("sched_yield until a frame time ahead: lateness", sleep_lateness(sleeper::yield, frame_ns, samples));
  (void)rocelab::set_thread_priority(0);
  if (cpus.size() >= 2) {
    const int other = cpus[cpus.size() - 2];
    print("woken from CPU " + std::to_string(other) + " after 1 ms idle: latency",
          wake_latency(cpu, other, std::min(samples, 1000), 1'000'000, rt ? 50 : 0));
  }
  for (int c : cpus) {
    const auto gaps = spin_gaps(c, spin_seconds);
    std::int64_t lost = 0;
    for (auto g : gaps) lost += g;
    char label[128];
    std::snprintf(label, sizeof label, "spinning on CPU %d for %.1f s: gaps over 20 us (%.2f ms lost)", c, spin_seconds,
                  static_cast<double>(lost) / 1e6);
    print(label, gaps);
  }
  return 0;
}
