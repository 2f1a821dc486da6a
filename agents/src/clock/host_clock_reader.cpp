#include "rocelab/agents/clock/host_clock_reader.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/timex.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "rocelab/common/monotonic_clock.hpp"
#include "rocelab/common/realtime_read.hpp"
#include "rocelab/common/spawn.hpp"
#include "rocelab/common/unique_fd.hpp"

namespace rocelab::agents::clock {

namespace {

// Runs argv (no shell) with stdout captured, for at most `timeout`, then kills it. An error
// when it could not start, timed out, or exited non-zero (its output is then of no use).
result<std::string> run_for_output(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  const std::string& name = argv.front();
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return status::from_errno(name + ": pipe");
  unique_fd from_child(fds[0]), to_parent(fds[1]);
  unique_fd null_fd(::open("/dev/null", O_RDWR | O_CLOEXEC));
  spawn_options o;
  o.argv = argv;
  o.search_path = name.find('/') == std::string::npos;
  o.stdin_fd = null_fd.get();
  o.stdout_fd = to_parent.get();
  o.stderr_fd = null_fd.get();
  auto pid = spawn(o);
  if (!pid) return status(pid.error().code(), name + ": " + pid.error().message());
  to_parent.reset();
  std::string out;
  const std::int64_t deadline = monotonic_ns() + std::chrono::nanoseconds(timeout).count();
  bool timed_out = false;
  for (;;) {
    const std::int64_t left_ms = (deadline - monotonic_ns()) / 1'000'000;
    if (left_ms <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{from_child.get(), POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(left_ms));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      timed_out = n == 0;
      break;
    }
    char chunk[4096];
    const ssize_t got = ::read(from_child.get(), chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    out.append(chunk, static_cast<std::size_t>(got));
    if (out.size() > (1u << 20)) break;  // pmc and chronyc print a few hundred bytes
  }
  if (timed_out) ::kill(*pid, SIGKILL);
  int st = 0;
  while (::waitpid(*pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) return status(error_code::unavailable, name + ": no answer within " + std::to_string(timeout.count()) + " ms");
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    return status(error_code::unavailable, name + " exited with status " + std::to_string(WIFEXITED(st) ? WEXITSTATUS(st) : -1));
  return out;
}

class process_pmc_reader final : public pmc_reader {
 public:
  explicit process_pmc_reader(std::string binary) : binary_(std::move(binary)) {}

  result<std::string> time_status_text() override {
    return run_for_output({binary_, "-u", "-b", "0", "GET TIME_STATUS_NP"}, pmc_timeout);
  }

 private:
  std::string binary_;
};

class host_discipline_reader final : public discipline_reader {
 public:
  host_discipline_reader(std::string proc_root, std::string chronyc_binary)
      : proc_root_(std::move(proc_root)), chronyc_(std::move(chronyc_binary)) {}

  bool phc2sys_running() override {
    std::error_code ec;
    for (std::filesystem::directory_iterator it(proc_root_, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string pid = it->path().filename().string();
      if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream comm(it->path() / "comm");
      std::string name;
      if (std::getline(comm, name) && name == "phc2sys") return true;
    }
    return false;
  }

  result<std::string> chronyc_tracking_text() override {
    // -n: addresses, not names (no DNS lookup); a refclock is named by its refid either way.
    return run_for_output({chronyc_, "-n", "tracking"}, pmc_timeout);
  }

 private:
  std::string proc_root_;
  std::string chronyc_;
};

class kernel_timex_reader final : public timex_reader {
 public:
  result<timex_reading> read() override {
    timex t{};
    t.modes = 0;  // read only
    const int state = ::ntp_adjtime(&t);
    if (state < 0) return status::from_errno("ntp_adjtime");
    timex_reading r;
    r.state = state;
    r.status = t.status;
    r.maxerror_us = t.maxerror;
    r.esterror_us = t.esterror;
    return r;
  }
};

}  // namespace

std::unique_ptr<pmc_reader> make_pmc_reader(std::string pmc_binary) {
  return std::make_unique<process_pmc_reader>(std::move(pmc_binary));
}

std::unique_ptr<timex_reader> make_timex_reader() { return std::make_unique<kernel_timex_reader>(); }

std::unique_ptr<discipline_reader> make_discipline_reader(std::string proc_root, std::string chronyc_binary) {
  return std::make_unique<host_discipline_reader>(std::move(proc_root), std::move(chronyc_binary));
}

clock_source read_host_clock(pmc_reader& pmc, timex_reader& timex, discipline_reader& discipline) {
  auto kernel = timex.read();
  if (!kernel) {
    clock_source s;
    s.detail = "kernel clock state unreadable: " + kernel.error().message();
    return s;
  }
  auto text = pmc.time_status_text();
  const result<pmc_time_status> parsed = text ? parse_pmc_time_status(*text) : result<pmc_time_status>(text.error());
  clock_discipline d;
  d.phc2sys_running = discipline.phc2sys_running();
  auto tracking = discipline.chronyc_tracking_text();
  d.chrony = tracking ? parse_chronyc_tracking(*tracking) : result<chrony_tracking>(tracking.error());
  return choose_clock_source(parsed, *kernel, d);
}

clock_source read_host_clock() {
  auto pmc = make_pmc_reader();
  auto timex = make_timex_reader();
  auto discipline = make_discipline_reader();
  return read_host_clock(*pmc, *timex, *discipline);
}

std::int64_t realtime_minus_monotonic_ns() noexcept {
  const realtime_read r = tightest_realtime_read(4, 20'000);
  return r.realtime_ns - (r.monotonic_before_ns + (r.monotonic_after_ns - r.monotonic_before_ns) / 2);
}

host_clock_monitor::host_clock_monitor(std::unique_ptr<pmc_reader> pmc, std::unique_ptr<timex_reader> timex,
                                       std::unique_ptr<discipline_reader> discipline,
                                       std::chrono::milliseconds interval)
    : pmc_(std::move(pmc)), timex_(std::move(timex)), discipline_(std::move(discipline)),
      latest_(read_host_clock(*pmc_, *timex_, *discipline_)),
      thread_([this, interval] { run(interval); }) {}

host_clock_monitor::~host_clock_monitor() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_.notify_all();
  thread_.join();
}

std::shared_ptr<host_clock_monitor> host_clock_monitor::of_this_host() {
  return std::make_shared<host_clock_monitor>(make_pmc_reader(), make_timex_reader(), make_discipline_reader());
}

clock_source host_clock_monitor::current() const {
  std::lock_guard lock(mutex_);
  return latest_;
}

void host_clock_monitor::run(std::chrono::milliseconds interval) {
  std::unique_lock lock(mutex_);
  while (!stop_.wait_for(lock, interval, [this] { return stopping_; })) {
    lock.unlock();
    clock_source s = read_host_clock(*pmc_, *timex_, *discipline_);
    lock.lock();
    latest_ = std::move(s);
  }
}

}  // namespace rocelab::agents::clock
