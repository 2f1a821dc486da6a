// rocelab nic-run: the soft RoCEv2 NIC (traffic/soft_nic) as a process in a host
// namespace of the virtual lab. The run orchestrator (nic_fleet) starts one per host and
// speaks JSON lines with it on stdin/stdout (protocol in nic_process.hpp).
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <iostream>

#include "command.hpp"
#include "rocelab/traffic/soft_nic/nic_process.hpp"

namespace rocelab::cli {
namespace {

std::atomic<bool> nic_stop_requested{false};
void on_nic_stop_signal(int) { nic_stop_requested.store(true); }

std::function<int()> setup_nic_run(CLI::App& app) {
  app.description(
      "The soft RoCEv2 NIC (run in a host namespace by `rocelab run` on a virtual lab): reads its config and "
      "commands as JSON lines on stdin, writes completions as JSON lines on stdout");
  return [] {
    struct sigaction sa {};
    sa.sa_handler = on_nic_stop_signal;
    ::sigaction(SIGTERM, &sa, nullptr);
    ::sigaction(SIGINT, &sa, nullptr);
    ::signal(SIGPIPE, SIG_IGN);
    const status st = traffic::soft_nic::run_nic_process(STDIN_FILENO, STDOUT_FILENO, nic_stop_requested);
    if (!st.ok()) {
      std::cerr << "rocelab nic-run: " << st.message() << "\n";
      return 1;
    }
    return 0;
  };
}

}  // namespace

// "nic-run" has a dash, which ROCELAB_COMMAND cannot spell.
static const command_registrar nic_run_registrar{"nic-run", setup_nic_run};

}  // namespace rocelab::cli
