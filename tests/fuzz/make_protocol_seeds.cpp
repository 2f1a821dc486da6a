// Seed frames for fuzz_protocol: one valid frame of every message type, written by the
// encoder itself, so the fuzzer starts from inputs that pass the header and the schema.
//   rocelab_fuzz_protocol_seeds DIR [SPEC.yaml...]
// Each SPEC given is also written as the submit_run frame a client sends for it.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "rocelab/protocol/clock_datagram.hpp"
#include "rocelab/protocol/messages.hpp"

using namespace rocelab;
using namespace rocelab::protocol;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: rocelab_fuzz_protocol_seeds DIR [SPEC.yaml...]\n";
    return 2;
  }
  start_job job;
  job.job = 1;
  job.kind = job_kind::soft;
  job.timeout_ms = 1000;
  job.hosts = {"h1", "h2"};
  job.messages = {{1, 65536, 0, 7}};
  job_report report;
  report.flows.resize(2);
  report.counters = {{0, 0, "rx_pfc", 1, 2}};
  run_records records;
  records.backend = "twin";
  records.hosts = {"h1", "h2"};
  records.devices = {"sw0", "h1", "h2"};
  records.flows.resize(1);
  records.pauses = {{0, 1, 3, 10, 20, pause_source::model}};
  records.counters = {{0, 1, "rx_pfc", 5, 2}};
  records.queues = {{0, 1, 3, 5, 4096}};
  records.allreduce = {{"ring", 2, 1 << 20, 1000, 8.0, 8.0}};
  records.events = {{event_kind::ce_mark, 0, 1, 3, 7, 1, 0, 2, pause_source::model}};
  records.totals = {1, 1, 10, 2, 2, 0, 0, 100};
  records.simulated_ns = 1000;
  records.lost_hosts = {"h2: agent h2 lost"};
  records.degraded = {"overran"};
  const message all[] = {hello{peer_role::agent, "h1", {"soft"}, 1},
                         welcome{"s", 250, 5000, 7100, 0x0123456789abcdefULL},
                         clock_exchange{100, 150, 160, 300},
                         heartbeat{1},
                         clock_probe{1, 100},
                         clock_reply{1, 100, 200, 300, {}},
                         apply_settings{1, "mlx5", {{"eth0", "roce_np/min_time_between_cnps", "4"}}},
                         settings_applied{1, {{"eth0", "roce_rp/rpg_time_reset", "300"}}},
                         job,
                         report,
                         restore_settings{1},
                         settings_restored{1, 3},
                         stop_job{1},
                         nic_command{1, {R"({"op":"post","qpn":257,"verb":"write","bytes":4096,"ref":0})"}},
                         nic_event{1, {R"({"ev":"sent","ref":0,"start_ns":1,"end_ns":2})"}},
                         submit_run{1, "backend: twin\n", "x.yaml", {"seed=2"}, "s-0123abcd", false},
                         run_finished{1, 4, "completed", "", "{}"},
                         error_message{1, "invalid argument", "why"},
                         register_worker{"node1-7", "node1", 7, {"twin"}, 1, "41", "0", "node1"},
                         trial_assignment{1, 1, "backend: twin\n", "x.yaml"},
                         trial_result{1, 1, "", {trial_repeat{0, 2, records}}, true}};
  int n = 0;
  for (const auto& m : all) {
    auto f = encode(m);
    if (!f) return 1;
    std::ofstream out(std::string(argv[1]) + "/" + to_string(type_of(m)) + ".bin", std::ios::binary);
    out.write(reinterpret_cast<const char*>(f->data()), static_cast<std::streamsize>(f->size()));
    if (!out) {
      std::cerr << "rocelab_fuzz_protocol_seeds: cannot write " << argv[1] << "\n";
      return 1;
    }
    ++n;
  }
  // The UDP clock service's datagrams go through the same target.
  const clock_datagram datagrams[] = {{clock_datagram_kind::probe, 0x0123456789abcdefULL, 100, 0, 0},
                                      {clock_datagram_kind::answer, 0x0123456789abcdefULL, 100, 150, 160}};
  for (const auto& d : datagrams) {
    const auto bytes = encode(d);
    std::ofstream out(std::string(argv[1]) + "/clock_datagram-" + std::to_string(static_cast<int>(d.kind)) + ".bin",
                      std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    ++n;
  }
  for (int i = 2; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    std::ostringstream yaml;
    yaml << in.rdbuf();
    const std::string name = std::filesystem::path(argv[i]).filename().string();
    auto f = encode(submit_run{1, yaml.str(), name, {}, "seed-" + std::to_string(n), false});
    if (!f) continue;  // over the frame limit: not a seed
    std::ofstream out(std::string(argv[1]) + "/submit_run-" + name + ".bin", std::ios::binary);
    out.write(reinterpret_cast<const char*>(f->data()), static_cast<std::streamsize>(f->size()));
    ++n;
  }
  std::cout << n << " seeds\n";
  return 0;
}
