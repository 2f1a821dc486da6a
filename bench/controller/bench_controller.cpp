// bench_controller [--agents N] [--rounds R]: the controller at lab scale.
//
// The parent runs the controller (store in a temporary directory); a child process (this
// binary again, --role agents) runs N lightweight agents on one io_context, each a real
// TLS-PSK client of its own. Reported:
//   registration  time from starting the agents to all N registered with >= 4 clock probes
//   skew          per round of timer jobs: max - min of the agents' actual start instants,
//                 mapped onto the controller's clock through each agent's estimated offset;
//                 and the latest start after T0
//   rss           the controller process's VmRSS before the agents, after registration and
//                 after the jobs (VmHWM too)
// Agents get random clock offsets (+-10 s) injected, so the starts go through the offset
// mapping. Two skews per round: "recorded", as the controller records it (each agent's
// start mapped through the run's clock), and "true", on the machine's CLOCK_MONOTONIC (each
// agent's reported start minus its injected offset, which the parent draws again from the
// same seed), which also shows the estimate's error. The agents share one start gate and
// one reading of this host's clock, as agents of one process may.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <thread>

#include <CLI/CLI.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include "rocelab/agents/agent/agent.hpp"
#include "rocelab/agents/agent/start_gate.hpp"
#include "rocelab/agents/clock/host_clock_reader.hpp"
#include "rocelab/controller/controller.hpp"

namespace {

using namespace std::chrono_literals;
const std::string token = "bench-controller-token-0123456789";

long rss_kb(const char* field = "VmRSS:") {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field, 0) == 0) return std::stol(line.substr(std::strlen(field)));
  return -1;
}

void raise_fd_limit() {
  rlimit r{};
  ::getrlimit(RLIMIT_NOFILE, &r);
  r.rlim_cur = r.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &r);
}

std::vector<std::int64_t> injected_offsets(int count) {
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<std::int64_t> offset(-10'000'000'000, 10'000'000'000);
  std::vector<std::int64_t> out;
  for (int i = 0; i < count; ++i) out.push_back(offset(rng));
  return out;
}

int run_agents(const std::string& controller, int count) {
  raise_fd_limit();
  boost::asio::io_context io;
  auto work = boost::asio::make_work_guard(io);
  const auto offsets = injected_offsets(count);
  auto gate = std::make_shared<rocelab::agents::agent::start_gate>();
  std::shared_ptr<const rocelab::agents::clock::host_clock_monitor> host_clock =
      rocelab::agents::clock::host_clock_monitor::of_this_host();
  std::vector<std::shared_ptr<rocelab::agents::agent::agent>> agents;
  for (int i = 0; i < count; ++i) {
    rocelab::agents::agent::agent_options o;
    o.controller = controller;
    o.name = "a" + std::to_string(i);
    o.token = token;
    o.deadman = 60s;
    o.reconnect_interval = 200ms;
    o.clock.offset_ns = offsets[static_cast<std::size_t>(i)];
    o.log = false;
    o.gate = gate;
    o.host_clock = host_clock;
    auto a = rocelab::agents::agent::agent::make(o);
    if (!a) {
      std::cerr << a.error().message() << "\n";
      return 1;
    }
    (*a)->start(io.get_executor());
    agents.push_back(*a);
  }
  boost::asio::signal_set signals(io, SIGTERM, SIGINT);
  signals.async_wait([&](auto, int) { io.stop(); });
  io.run();
  return 0;
}

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("controller scale bench");
  int agents = 1000, rounds = 5;
  std::string role = "controller", controller_address;
  app.add_option("--agents", agents)->capture_default_str();
  app.add_option("--rounds", rounds)->capture_default_str();
  app.add_option("--role", role);
  app.add_option("--controller", controller_address);
  CLI11_PARSE(app, argc, argv);
  if (role == "agents") return run_agents(controller_address, agents);

  raise_fd_limit();
  const auto dir = std::filesystem::temp_directory_path() / ("rlc-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  rocelab::controller::controller_options o;
  o.listen = "127.0.0.1:0";
  o.db_path = (dir / "bench.db").string();
  o.token = token;
  o.heartbeat_interval = 1000ms;  // 1,000 agents: one probe per agent per second
  o.agent_timeout = 10s;
  o.handshake_timeout = 30s;
  o.start_lead = 500ms;
  o.log = false;
  auto c = rocelab::controller::controller::start(o);
  if (!c) {
    std::cerr << c.error().message() << "\n";
    return 1;
  }
  const long rss_idle = rss_kb();

  const auto t_start = std::chrono::steady_clock::now();
  const pid_t child = ::fork();
  if (child == 0) {
    const std::string n = std::to_string(agents), addr = (*c)->address();
    ::execl("/proc/self/exe", argv[0], "--role", "agents", "--agents", n.c_str(), "--controller", addr.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::vector<std::string> names;
  for (int i = 0; i < agents; ++i) names.push_back("a" + std::to_string(i));
  bool ok = (*c)->wait_for_agent_count(static_cast<std::size_t>(agents), 300s);
  const double registered_ms = ms_since(t_start);
  ok = ok && (*c)->wait_for_agents(names, 300s, 4);
  const double clocked_ms = ms_since(t_start);
  const long rss_registered = rss_kb();
  std::printf("agents            %d\n", agents);
  std::printf("registration      %.0f ms to all registered, %.0f ms to all with >= 4 clock probes%s\n", registered_ms,
              clocked_ms, ok ? "" : " (TIMED OUT)");

  const auto offsets = injected_offsets(agents);
  std::vector<double> skews, lates, true_skews;
  std::string clock_source;
  double clock_uncertainty_us = 0;
  for (int r = 0; ok && r < rounds; ++r) {
    std::vector<rocelab::controller::job_plan> plans(static_cast<std::size_t>(agents));
    for (int i = 0; i < agents; ++i) {
      plans[static_cast<std::size_t>(i)].agent = names[static_cast<std::size_t>(i)];
      plans[static_cast<std::size_t>(i)].job.kind = rocelab::protocol::job_kind::timer;
      plans[static_cast<std::size_t>(i)].job.timeout_ms = 30000;
    }
    const auto t_job = std::chrono::steady_clock::now();
    auto res = (*c)->run_jobs(plans, 60s);
    if (!res) {
      std::cerr << res.error().message() << "\n";
      break;
    }
    std::int64_t lo = INT64_MAX, hi = INT64_MIN, true_lo = INT64_MAX, true_hi = INT64_MIN;
    std::size_t reported = 0;
    for (std::size_t i = 0; i < res->outcomes.size(); ++i) {
      const auto& out = res->outcomes[i];
      if (!out.reported || !out.error.empty()) continue;
      ++reported;
      lo = std::min(lo, out.started_ns);
      hi = std::max(hi, out.started_ns);
      const std::int64_t true_start = out.agent_started_ns - offsets[i];
      true_lo = std::min(true_lo, true_start);
      true_hi = std::max(true_hi, true_start);
    }
    clock_source = res->clock.source;
    clock_uncertainty_us = std::max(clock_uncertainty_us, res->clock.uncertainty_ns / 1e3);
    true_skews.push_back(static_cast<double>(true_hi - true_lo) / 1e3);
    const double skew_us = static_cast<double>(hi - lo) / 1e3;
    const double late_us = static_cast<double>(hi - res->t0_ns) / 1e3;
    skews.push_back(skew_us);
    lates.push_back(late_us);
    std::printf("job round %d       %zu/%d reported in %.0f ms; start skew %.1f us recorded (max - min), %.1f us true; "
                "latest %.1f us after T0, earliest %.1f us after T0 (true: %.1f .. %.1f us)\n",
                r + 1, reported, agents, ms_since(t_job), skew_us, true_skews.back(), late_us,
                static_cast<double>(lo - res->t0_ns) / 1e3, static_cast<double>(true_lo - res->t0_ns) / 1e3,
                static_cast<double>(true_hi - res->t0_ns) / 1e3);
  }
  double worst_uncertainty = 0;
  for (const auto& a : (*c)->agents()) worst_uncertainty = std::max(worst_uncertainty, a.clock_uncertainty_ns);
  std::printf("clock             runs on %s, start uncertainty up to %.1f us; worst agent offset uncertainty now "
              "%.1f us (half the best probe round trip plus its drift since)\n",
              clock_source.c_str(), clock_uncertainty_us, worst_uncertainty / 1e3);
  std::printf("controller rss    %ld KiB idle, %ld KiB with %d agents registered, %ld KiB after jobs (peak %ld KiB)\n",
              rss_idle, rss_registered, agents, rss_kb(), rss_kb("VmHWM:"));
  if (!skews.empty()) {
    std::sort(skews.begin(), skews.end());
    std::printf("skew              recorded median %.1f us, worst %.1f us over %zu rounds\n", skews[skews.size() / 2],
                skews.back(), skews.size());
    std::sort(true_skews.begin(), true_skews.end());
    std::printf("true skew         median %.1f us, worst %.1f us\n", true_skews[true_skews.size() / 2], true_skews.back());
  }
  ::kill(child, SIGTERM);
  int st = 0;
  ::waitpid(child, &st, 0);
  c->reset();
  std::filesystem::remove_all(dir);
  return ok ? 0 : 1;
}
