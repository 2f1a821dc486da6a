#pragma once
// Loopback fixtures for the controller tests: a controller on 127.0.0.1:0 with its store
// in a fresh temporary directory, and in-process agents on their own io_context thread.

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <filesystem>
#include <sstream>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <sqlite3.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include "rocelab/agents/agent/agent.hpp"
#include "rocelab/cli/in_process_agents.hpp"
#include "rocelab/controller/controller.hpp"
#include "rocelab/traffic/soft_nic/nic_fleet.hpp"
#include "authenticated_peer.hpp"

namespace rocelab::test {


// A controller in a child process: `child_main(to_parent)` starts it, writes its port and
// a newline to `to_parent` and never returns (the test kills it). Returns the child's pid
// and the port it reported; port 0 when the child reported nothing (the caller asserts).
struct forked_controller {
  pid_t pid = -1;
  std::uint16_t port = 0;
};
inline forked_controller fork_controller(const std::function<void(int to_parent)>& child_main) {
  int fds[2];
  if (::pipe(fds) != 0) return {};
  const pid_t child = ::fork();
  if (child < 0) return {};
  if (child == 0) {
    ::close(fds[0]);
    child_main(fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  FILE* from_child = ::fdopen(fds[0], "r");
  char line[64] = {};
  const bool got = from_child && std::fgets(line, sizeof line, from_child);
  if (from_child) std::fclose(from_child);
  return {child, got ? static_cast<std::uint16_t>(std::atoi(line)) : std::uint16_t{0}};
}

// The recorded mlx5 port (tests/data/mlx5-sysfs) an agent's settings go to.
inline const std::string mlx5_port = "enp1s0f0np0";

struct temp_dir {
  std::filesystem::path path;
  explicit temp_dir(const std::string& tag) {
    path = std::filesystem::temp_directory_path() /
           ("rlc-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  static int& counter() {
    static int n = 0;
    return n;
  }
};

// A writable copy of the recorded mlx5 sysfs tree in dir/sys (the agent's sysfs root);
// returns the path of `knob` ("roce_np/min_time_between_cnps") of mlx5_port in it.
inline std::filesystem::path recorded_mlx5_sysfs(const temp_dir& dir, const std::string& knob) {
  const auto root = dir.path / "sys";
  if (!std::filesystem::exists(root))
    std::filesystem::copy(std::filesystem::path(ROCELAB_SOURCE_DIR) / "tests/data/mlx5-sysfs", root,
                          std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  return root / "class/net" / mlx5_port / "ecn" / knob;
}

// One timer job per named agent, each reporting when it really started.
inline std::vector<controller::job_plan> timer_plans(const std::vector<std::string>& names,
                                                     std::uint32_t timeout_ms = 10000) {
  std::vector<controller::job_plan> plans;
  for (const auto& n : names) {
    controller::job_plan p;
    p.agent = n;
    p.job.kind = protocol::job_kind::timer;
    p.job.timeout_ms = timeout_ms;
    plans.push_back(p);
  }
  return plans;
}

inline controller::controller_options quick_controller_options(const temp_dir& dir) {
  controller::controller_options o;
  o.listen = "127.0.0.1:0";
  o.db_path = (dir.path / "runs.db").string();
  o.token = test_token;
  o.heartbeat_interval = std::chrono::milliseconds(50);
  o.agent_timeout = std::chrono::milliseconds(600);
  o.deadman = std::chrono::milliseconds(5000);
  o.start_lead = std::chrono::milliseconds(150);
  o.log = std::getenv("ROCELAB_TEST_LOG") != nullptr;
  o.launcher = std::make_shared<cli::in_process_agents>();
  return o;
}

// A quick controller whose runs drive the virtual lab on this machine. Its NICs and switch
// run SCHED_FIFO and keep both CPUs busy through an incast, when a normal thread (the
// lab's agents, this controller) gets only the kernel's RT-throttling remainder, 50 ms of
// each second: a silence of up to 950 ms is then the host's, not a lost agent's (CI: an
// agent dropped after 600 ms, and once every agent at once). So the agent timeout is the
// production one (2 s); a killed agent is still seen at once, its connection closing. Its
// in-process agents relay above the NICs, as `rocelab run`'s do.
inline controller::controller_options lab_controller_options(const temp_dir& dir) {
  controller::controller_options o = quick_controller_options(dir);
  o.agent_timeout = controller::controller_options{}.agent_timeout;
  o.launcher = std::make_shared<cli::in_process_agents>(traffic::soft_nic::lab_relay_rt_priority);
  return o;
}

// Agents sharing one io_context thread.
class agent_pool {
 public:
  agent_pool() : work_(boost::asio::make_work_guard(io_)) {
    thread_ = std::thread([this] { io_.run(); });
  }
  ~agent_pool() {
    for (auto& a : agents_) a->stop();
    work_.reset();
    // Let stop() close the sessions, then end the loop even if a timer is pending.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    io_.stop();
    thread_.join();
  }

  std::shared_ptr<agents::agent::agent> add(const std::string& controller, const std::string& name,
                                            std::int64_t clock_offset_ns = 0, std::string token = test_token,
                                            std::chrono::milliseconds deadman = std::chrono::milliseconds(5000),
                                            std::string sysfs_root = {},
                                            std::shared_ptr<const agents::clock::host_clock_monitor> host_clock = {}) {
    agents::agent::agent_options o;
    o.controller = controller;
    o.name = name;
    o.token = std::move(token);
    o.deadman = deadman;
    o.reconnect_interval = std::chrono::milliseconds(50);
    o.clock.offset_ns = clock_offset_ns;
    o.log = std::getenv("ROCELAB_TEST_LOG") != nullptr;
    o.gate = gate_;  // one wake-up at T0 for the pool (start_gate.hpp)
    o.host_clock = host_clock ? std::move(host_clock) : host_clock_;
    if (!sysfs_root.empty()) o.sysfs_root = std::move(sysfs_root);
    auto a = agents::agent::agent::make(o);
    if (!a) return nullptr;
    (*a)->start(io_.get_executor());
    agents_.push_back(*a);
    return *a;
  }

  boost::asio::io_context& io() { return io_; }

 private:
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::thread thread_;
  std::shared_ptr<agents::agent::start_gate> gate_ = std::make_shared<agents::agent::start_gate>();
  std::shared_ptr<const agents::clock::host_clock_monitor> host_clock_ = agents::clock::host_clock_monitor::of_this_host();
  std::vector<std::shared_ptr<agents::agent::agent>> agents_;
};

// Waits (bounded) until `pred` holds.
template <typename P>
bool eventually(P pred, std::chrono::milliseconds limit = std::chrono::milliseconds(10000)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pred();
}

// Live (not zombie) processes whose parent is `parent`, from /proc.
inline std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream f(e.path() / "stat");
    std::string line;
    if (!std::getline(f, line)) continue;
    const auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    char state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent && state != 'Z') out.push_back(std::stoi(name));
  }
  return out;
}

// test_token in dir/token, mode 600 (what --token-file reads).
inline std::string write_token_file(const temp_dir& dir) {
  const std::string path = (dir.path / "token").string();
  {
    std::ofstream t(path);
    t << test_token << "\n";
  }
  std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
                               std::filesystem::perm_options::replace);
  return path;
}

// PRAGMA integrity_check of a store file, as SQLite itself reads it ("ok" when sound).
inline std::string integrity_check(const std::string& db) {
  sqlite3* raw = nullptr;
  if (sqlite3_open_v2(db.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    sqlite3_close(raw);
    return "cannot open " + db;
  }
  std::unique_ptr<sqlite3, decltype(&sqlite3_close)> conn(raw, &sqlite3_close);
  std::string integrity;
  sqlite3_exec(
      conn.get(), "PRAGMA integrity_check",
      [](void* out, int, char** values, char**) {
        *static_cast<std::string*>(out) += values[0] ? values[0] : "";
        return 0;
      },
      &integrity, nullptr);
  return integrity;
}

}  // namespace rocelab::test
