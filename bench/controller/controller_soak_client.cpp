// controller_soak_client --controller ADDR --token-file F --pid PID [--runs N] [--every K]:
// submits the smallest twin spec N times to a running controller (the path of
// `rocelab run --controller`, one connection per run) and every K runs prints the
// controller's footprint from /proc/PID as CSV:
//   runs,elapsed_s,vm_size_kb,vm_rss_kb,fds,maps,threads
// Exit status 1 when a run does not complete.
// With --abuse KIND (names, pieces, bodies, idle; controller_abuse.hpp) it abuses the
// controller instead and prints what that cost it and whether runs were still served.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "controller_abuse.hpp"
#include "rocelab/controller/client.hpp"
#include "rocelab/protocol/security.hpp"

namespace {

struct footprint {
  long vm_kb = 0, rss_kb = 0, threads = 0;
  std::size_t fds = 0, maps = 0;
};

footprint footprint_of(long pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  footprint f;
  std::ifstream status(proc + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmSize:", 0) == 0) f.vm_kb = std::stol(line.substr(7));
    if (line.rfind("VmRSS:", 0) == 0) f.rss_kb = std::stol(line.substr(6));
    if (line.rfind("Threads:", 0) == 0) f.threads = std::stol(line.substr(8));
  }
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(proc + "/fd", ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec))
    ++f.fds;
  std::ifstream maps(proc + "/maps");
  for (std::string line; std::getline(maps, line);) ++f.maps;
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Soak a running controller with remote runs, printing its footprint");
  std::string controller, token_file;
  long pid = 0;
  int runs = 10000, every = 500;
  std::string abuse, role = "worker";
  int count = 1000, per_second = 100, seconds = 30;
  app.add_option("--controller", controller, "host:port")->required();
  app.add_option("--token-file", token_file, "the lab token")->required();
  app.add_option("--pid", pid, "the controller's process id (its /proc is read)")->required();
  app.add_option("--runs", runs, "remote runs")->capture_default_str();
  app.add_option("--every", every, "print the footprint every this many runs")->capture_default_str();
  app.add_option("--abuse", abuse, "names | pieces | bodies | idle: abuse instead of soaking")
      ->check(CLI::IsMember({"names", "pieces", "bodies", "idle"}));
  app.add_option("--role", role, "names: worker | agent")->check(CLI::IsMember({"worker", "agent"}))->capture_default_str();
  app.add_option("--count", count, "names: names; pieces: pieces; bodies: token holders")->capture_default_str();
  app.add_option("--per-second", per_second, "idle: connections opened a second")->capture_default_str();
  app.add_option("--seconds", seconds, "idle: for this long")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  auto token = rocelab::protocol::read_token_file(token_file);
  if (!token) {
    std::cerr << "controller_soak_client: " << token.error().message() << "\n";
    return 2;
  }
  if (!abuse.empty()) {
    const rocelab::bench::abuse_target t{controller, *token, pid};
    if (abuse == "names") return rocelab::bench::abuse_names(t, role, count);
    if (abuse == "pieces") return rocelab::bench::abuse_pieces(t, count);
    if (abuse == "bodies") return rocelab::bench::abuse_bodies(t, count);
    return rocelab::bench::abuse_idle(t, per_second, seconds);
  }
  rocelab::controller::submit_options o;
  o.controller = controller;
  o.token = *token;
  o.reconnect_window = std::chrono::milliseconds(0);
  const auto start = std::chrono::steady_clock::now();
  const auto print = [&](int done) {
    const auto f = footprint_of(pid);
    std::printf("%d,%.1f,%ld,%ld,%zu,%zu,%ld\n", done,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), f.vm_kb, f.rss_kb,
                f.fds, f.maps, f.threads);
    std::fflush(stdout);
  };
  std::printf("runs,elapsed_s,vm_size_kb,vm_rss_kb,fds,maps,threads\n");
  print(0);
  for (int i = 1; i <= runs; ++i) {
    auto done = rocelab::controller::submit_spec(o, rocelab::bench::tiny_spec, "soak.yaml", {});
    if (!done || done->status != "completed") {
      std::cerr << "controller_soak_client: run " << i << ": "
                << (done ? done->status + " " + done->error : done.error().message()) << "\n";
      print(i - 1);
      return 1;
    }
    if (i % every == 0 || i == runs) print(i);
  }
  return 0;
}
