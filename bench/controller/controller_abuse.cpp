#include "controller_abuse.hpp"

#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <thread>
#include <vector>

#include "authenticated_peer.hpp"
#include "rocelab/controller/client.hpp"

namespace rocelab::bench {

const char* const tiny_spec =
    "name: soak\nbackend: twin\nseed: 9\ntopology: {hosts: 3, link_gbps: 100}\n"
    "workload: {incast: {receiver: 0, senders: 2, flow_bytes: 16KiB}}\n";

namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

// VmRSS, or with field "VmHWM:" the peak RSS, of the process.
long rss_kb(long pid, const std::string& field = "VmRSS:") {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind(field, 0) == 0) return std::stol(line.substr(field.size()));
  return -1;
}

std::uint16_t port_of(const std::string& address) {
  return static_cast<std::uint16_t>(std::stoul(address.substr(address.rfind(':') + 1)));
}

controller::submit_options client_of(const abuse_target& t) {
  controller::submit_options o;
  o.controller = t.controller;
  o.token = t.token;
  o.reconnect_window = 0ms;
  return o;
}

// One remote run: its wall time in seconds, or a negative number when it did not complete.
double timed_run(const abuse_target& t, std::string* why = nullptr) {
  const auto start = clock_type::now();
  auto done = controller::submit_spec(client_of(t), tiny_spec, "abuse.yaml", {});
  const double s = std::chrono::duration<double>(clock_type::now() - start).count();
  if (done && done->status == "completed") return s;
  if (why) *why = done ? done->status + ": " + done->error : done.error().message();
  return -1;
}

void raise_fd_limit() {
  rlimit r{};
  ::getrlimit(RLIMIT_NOFILE, &r);
  r.rlim_cur = r.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &r);
}

}  // namespace

int abuse_names(const abuse_target& t, const std::string& role, int count) {
  boost::asio::io_context io;
  const double run_before = timed_run(t);
  const long before = rss_kb(t.pid);
  const auto start = clock_type::now();
  int registered = 0;
  for (int i = 0; i < count; ++i) {
    test::authenticated_peer p(io, port_of(t.controller), t.token);
    const std::string name = "bench-" + role + "-" + std::to_string(i);
    const bool sent = role == "worker" ? p.send(protocol::register_worker{name, "bench", 1, {"twin"}, 1, "", "", ""})
                                       : p.send(protocol::hello{protocol::peer_role::agent, name, {"soft"}, 1});
    if (p.ok() && sent && p.read().ok()) ++registered;
  }  // each leaves as its peer goes
  std::this_thread::sleep_for(2s);  // the controller sees every session end
  const long after = rss_kb(t.pid);
  std::vector<double> runs;
  for (int i = 0; i < 5; ++i) runs.push_back(timed_run(t));
  std::sort(runs.begin(), runs.end());
  std::printf("names,role,registered,seconds,rss_before_kb,rss_after_kb,kb_per_name,run_before_s,run_after_median_s\n");
  std::printf("names,%s,%d,%.1f,%ld,%ld,%.1f,%.3f,%.3f\n", role.c_str(), registered,
              std::chrono::duration<double>(clock_type::now() - start).count(), before, after,
              registered ? static_cast<double>(after - before) / registered : 0.0, run_before, runs[2]);
  return registered == count ? 0 : 1;
}

int abuse_pieces(const abuse_target& t, int pieces) {
  boost::asio::io_context io;
  const long before = rss_kb(t.pid);
  test::authenticated_peer worker(io, port_of(t.controller), t.token, 10000);
  if (!worker.ok() || !worker.send(protocol::register_worker{"bench-fake", "bench", 1, {"twin"}, 1, "", "", ""})) {
    std::fprintf(stderr, "the fake worker could not register\n");
    return 1;
  }
  // Registered once welcomed: only then does a twin run go to a worker.
  for (int i = 0; i < 10; ++i) {
    auto m = worker.read();
    if (!m || std::holds_alternative<protocol::welcome>(*m)) break;
  }
  // A client's twin run goes to the registered worker: the fake one.
  std::atomic<bool> give_up{false};
  std::string outcome = "(still waiting)";
  std::atomic<bool> answered{false};
  std::thread client([&] {
    auto o = client_of(t);
    o.cancel_requested = [&] { return give_up.load(); };
    auto done = controller::submit_spec(o, tiny_spec, "abuse.yaml", {});
    outcome = done ? done->status + (done->error.empty() ? "" : ": " + done->error) : done.error().message();
    answered = true;
  });
  std::optional<protocol::trial_assignment> given;
  for (int i = 0; i < 100 && !given; ++i) {
    auto m = worker.read();
    if (!m) break;
    if (auto* a = std::get_if<protocol::trial_assignment>(&*m)) given = *a;
  }
  int sent = 0;
  if (given) {
    protocol::trial_repeat rep{0, 9, {}};
    rep.records.backend = "twin";
    rep.records.hosts = {"h0", "h1", "h2"};
    rep.records.flows.resize(protocol::max_records_per_piece);
    for (; sent < pieces; ++sent) {
      if (sent % 16 == 0) (void)worker.send(protocol::heartbeat{static_cast<std::uint64_t>(sent + 1)});
      if (!worker.send(protocol::trial_result{given->trial, given->attempt, "", {rep}, false})) break;
    }
  }
  std::this_thread::sleep_for(1s);
  const long held = rss_kb(t.pid);
  const bool kept = worker.send(protocol::heartbeat{1});
  // The worker leaves.
  { auto gone = std::move(worker); }
  for (int i = 0; i < 50 && !answered; ++i) std::this_thread::sleep_for(100ms);
  const bool answered_once_gone = answered.load();
  const long after = rss_kb(t.pid);
  give_up = true;
  client.join();
  std::printf("pieces,assigned,sent,connection_kept,rss_before_kb,rss_held_kb,rss_peak_kb,rss_after_leaving_kb,"
              "run_answered_within_5s_of_leaving,run\n");
  std::printf("pieces,%d,%d,%d,%ld,%ld,%ld,%ld,%d,\"%s\"\n", given ? 1 : 0, sent, kept ? 1 : 0, before, held,
              rss_kb(t.pid, "VmHWM:"), after, answered_once_gone ? 1 : 0, outcome.c_str());
  return given ? 0 : 1;
}

int abuse_bodies(const abuse_target& t, int holders) {
  raise_fd_limit();
  boost::asio::io_context io;
  const long before = rss_kb(t.pid);
  std::vector<std::unique_ptr<test::authenticated_peer>> peers;
  for (int i = 0; i < holders; ++i) {
    auto p = std::make_unique<test::authenticated_peer>(io, port_of(t.controller), t.token);
    if (!p->ok() || !p->send(protocol::hello{protocol::peer_role::client, "holder", {}, 1}) || !p->read().ok()) continue;
    auto frame = protocol::encode(protocol::submit_run{1, "x", "x.yaml", {}, ""});
    std::vector<std::uint8_t> declared(frame->begin(), frame->begin() + protocol::frame_header_bytes);
    const std::uint32_t body = protocol::max_body_bytes;
    declared[0] = std::uint8_t(body >> 24);
    declared[1] = std::uint8_t(body >> 16);
    declared[2] = std::uint8_t(body >> 8);
    declared[3] = std::uint8_t(body);
    declared.push_back('{');
    if (p->write(declared)) peers.push_back(std::move(p));
  }
  std::this_thread::sleep_for(1s);
  const long held = rss_kb(t.pid);
  std::string why;
  const double run = timed_run(t, &why);
  std::printf("bodies,holders,declared_mib,rss_before_kb,rss_held_kb,run_beside_s\n");
  std::printf("bodies,%zu,%zu,%ld,%ld,%.3f%s\n", peers.size(), peers.size() * (protocol::max_body_bytes >> 20), before,
              held, run, run < 0 ? (" (" + why + ")").c_str() : "");
  return 0;
}

int abuse_idle(const abuse_target& t, int per_second, int seconds) {
  raise_fd_limit();
  std::atomic<bool> done{false};
  std::atomic<int> ok{0}, failed{0};
  std::map<std::string, int> reasons;
  std::thread runs([&] {
    while (!done) {
      std::string why;
      if (timed_run(t, &why) >= 0) {
        ++ok;
      } else {
        ++failed;
        ++reasons[why.substr(0, 100)];
      }
    }
  });
  std::vector<int> idle;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port_of(t.controller));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const auto start = clock_type::now();
  const int total = per_second * seconds;
  for (int i = 0; i < total; ++i) {
    std::this_thread::sleep_until(start + std::chrono::microseconds(1'000'000LL * i / per_second));
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) continue;
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
      ::close(fd);
      continue;
    }
    idle.push_back(fd);
  }
  done = true;
  runs.join();
  const long rss = rss_kb(t.pid);
  for (int fd : idle) ::close(fd);
  std::printf("idle,per_second,seconds,opened,runs_completed,runs_failed,rss_kb\n");
  std::printf("idle,%d,%d,%zu,%d,%d,%ld\n", per_second, seconds, idle.size(), ok.load(), failed.load(), rss);
  for (const auto& [why, n] : reasons) std::printf("  %dx %s\n", n, why.c_str());
  return 0;
}

}  // namespace rocelab::bench
