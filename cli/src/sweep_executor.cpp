#include "rocelab/cli/sweep_executor.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <thread>

#include "killed_sweeps.hpp"
#include "rocelab/common/own_executable.hpp"
#include "rocelab/common/spawn.hpp"
#include "rocelab/common/unique_fd.hpp"
#include "rocelab/controller/client.hpp"
#include "rocelab/controller/controller.hpp"
#include "rocelab/protocol/security.hpp"
#include "rocelab/experiments/spec/spec_files.hpp"

namespace rocelab::cli {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr auto monitor_every = 1000ms;
constexpr auto local_exit_wait = 5000ms;
constexpr auto slurm_drain_wait = 15000ms;   // a finished sweep's workers leave the queue
constexpr auto slurm_cancel_wait = 10000ms;  // a cancelled job leaves the queue

std::string random_token() {
  std::random_device rd;
  static constexpr char hex[] = "0123456789abcdef";
  std::string t;
  for (int i = 0; i < 32; ++i) {
    const auto v = rd();
    t += hex[v & 0xf];
    t += hex[(v >> 4) & 0xf];
  }
  return t;
}

// A fresh file only this user reads, holding the token.
status write_token_file(const std::string& path, const std::string& token) {
  unique_fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (fd.get() < 0) return status(error_code::io_error, "creating token file " + path + ": " + std::strerror(errno), errno);
  const std::string line = token + "\n";
  if (::write(fd.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size()))
    return status(error_code::io_error, "writing token file " + path + ": " + std::strerror(errno), errno);
  return status::success();
}

std::string self_exe() {
  std::string p = own_executable_path();
  return p.empty() ? std::string("rocelab") : p;
}

std::string host_name() {
  char h[256] = {};
  if (::gethostname(h, sizeof h - 1) != 0) return "localhost";
  return h;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

result<executor_kind> parse_executor(std::string_view text) {
  if (text == "threads") return executor_kind::threads;
  if (text == "local") return executor_kind::local;
  if (text == "slurm") return executor_kind::slurm;
  return status(error_code::invalid_argument, "--executor '" + std::string(text) + "': expected local or slurm");
}

class sweep_executor::impl {
 public:
  explicit impl(executor_options o) : o_(std::move(o)), slurm_(o_.slurm_prefix) {}
  ~impl() { (void)end(true); }

  status start();
  bool wait_for_logged_registrations(const std::function<bool()>& give_up) const;
  std::vector<std::string> end(bool cancel);
  result<experiments::trial_runs> run(const experiments::experiment_spec& spec);
  void monitor(std::stop_token st);
  void fail(const std::string& why) {
    std::lock_guard lock(mutex_);
    if (failure_.empty()) failure_ = why;
  }
  std::string failure() const {
    std::lock_guard lock(mutex_);
    return failure_;
  }
  void log(const std::string& line) const {
    if (o_.log) o_.log(line);
  }

  executor_options o_;
  slurm_commands slurm_;
  std::string work_dir_, token_path_, address_, job_;
  std::unique_ptr<controller::controller> controller_;  // embedded; null when attached
  experiments::trial_runner remote_;                     // attached: trials as runs there
  std::vector<pid_t> pids_;  // local workers (reaped by monitor or end)
  mutable std::mutex mutex_;
  std::string failure_;
  std::string progress_;
  bool ended_ = false;
  std::jthread monitor_;  // last: stops first
};

status sweep_executor::impl::start() {
  if (o_.workers == 0) return status(error_code::invalid_argument, "--workers must be at least 1");
  std::error_code ec;
  if (o_.work_dir.empty()) remove_killed_sweeps(fs::current_path(ec) / ".rocelab" / "sweeps", [this](const std::string& line) { log(line); });
  work_dir_ = o_.work_dir.empty() ? (fs::current_path(ec) / ".rocelab" / "sweeps" / std::to_string(::getpid())).string()
                                  : fs::absolute(o_.work_dir, ec).string();
  fs::create_directories(work_dir_, ec);
  if (ec) return status(error_code::io_error, "creating " + work_dir_ + ": " + ec.message());
  ::chmod(work_dir_.c_str(), 0700);
  token_path_ = work_dir_ + "/token";
  if (o_.work_dir.empty()) std::ofstream(work_dir_ + "/host") << sweep_host_name() << "\n";

  if (!o_.controller.empty()) {
    if (!o_.listen.empty())
      return status(error_code::invalid_argument, "--listen starts a controller; --controller uses a running one: not both");
    if (o_.token_file.empty())
      return status(error_code::invalid_argument,
                    "--controller " + o_.controller + " needs --token-file: the controller's token, which the workers read");
    auto token = protocol::read_token_file(o_.token_file);
    if (!token) return token.error().with_context("--token-file");
    address_ = o_.controller;
    token_path_ = fs::absolute(o_.token_file, ec).string();
    controller::submit_options so;
    so.controller = address_;
    so.token = *token;
    so.cancel_requested = [this] { return (o_.stop_requested && o_.stop_requested()) || !failure().empty(); };
    remote_ = controller::remote_trial_runner(so);
  } else {
    fs::remove(token_path_, ec);
    const std::string token = random_token();
    ROCELAB_RETURN_IF_ERROR(write_token_file(token_path_, token));
    controller::controller_options co;
    co.listen = o_.listen.empty() ? "127.0.0.1:0" : o_.listen;
    co.db_path = o_.db.empty() ? work_dir_ + "/controller.db" : o_.db;
    co.token = token;
    co.log = false;
    auto c = controller::controller::start(co);
    if (!c)
      return status(c.error().code(), "--listen " + co.listen + ": the controller cannot listen there (" +
                                          c.error().message() + "); give an address of this host that the workers reach");
    controller_ = std::move(*c);
    address_ = controller_->address();
    if (address_.starts_with("0.0.0.0:")) address_ = host_name() + address_.substr(7);
  }
  const std::string binary = o_.rocelab_binary.empty() ? self_exe() : o_.rocelab_binary;

  if (o_.kind == executor_kind::local) {
    for (std::uint32_t i = 0; i < o_.workers; ++i) {
      const std::string log_path = work_dir_ + "/worker-" + std::to_string(i) + ".log";
      unique_fd out(::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
      if (out.get() < 0) return status(error_code::io_error, "creating " + log_path + ": " + std::strerror(errno), errno);
      spawn_options so;
      so.argv = {binary, "worker", "--controller", address_, "--token-file", token_path_};
      so.stdout_fd = out.get();
      so.stderr_fd = out.get();
      so.death_signal = SIGTERM;
      auto pid = spawn(so);
      if (!pid) return pid.error().with_context("starting worker " + std::to_string(i));
      pids_.push_back(*pid);
    }
    const auto give_up = [this] { return o_.stop_requested && o_.stop_requested(); };
    if (!(controller_ ? controller_->wait_for_workers(o_.workers, o_.worker_start_timeout, give_up)
                      : wait_for_logged_registrations(give_up)))
      return status(error_code::unavailable, std::to_string(o_.workers) + " local workers did not all register within " +
                                                 std::to_string(o_.worker_start_timeout.count() / 1000) + " s (logs in " +
                                                 work_dir_ + ")");
  } else {
    std::vector<std::string> args{"--job-name=rocelab-sweep", "--array=0-" + std::to_string(o_.workers - 1),
                                  "--output=" + work_dir_ + "/worker-%A_%a.log", "--ntasks=1"};
    for (const std::string& kv : o_.slurm_opts) {
      const auto eq = kv.find('=');
      if (kv.empty() || eq == 0) return status(error_code::invalid_argument, "--slurm-opt '" + kv + "': expected KEY=VALUE");
      args.push_back("--" + kv);
    }
    const std::string script = "#!/bin/sh\n# rocelab sweep workers: one per array task\nexec srun " +
                               shell_quote(binary) + " worker --controller " + shell_quote(address_) +
                               " --token-file " + shell_quote(token_path_) + "\n";
    auto job = slurm_.submit(args, script);
    if (!job) return job.error();
    job_ = *job;
    log("Slurm job array " + job_ + " (" + std::to_string(o_.workers) + " workers) submitted; controller at " + address_);
  }
  monitor_ = std::jthread([this](std::stop_token st) { monitor(st); });
  return status::success();
}

// Attached: the controller is another process, so a local worker's registration is read
// from its log (`rocelab worker` logs "registered with ADDR as ...").
bool sweep_executor::impl::wait_for_logged_registrations(const std::function<bool()>& give_up) const {
  const auto deadline = std::chrono::steady_clock::now() + o_.worker_start_timeout;
  while (true) {
    std::uint32_t registered = 0;
    for (std::uint32_t i = 0; i < o_.workers; ++i) {
      std::ifstream log(work_dir_ + "/worker-" + std::to_string(i) + ".log");
      for (std::string line; std::getline(log, line);)
        if (line.find(": registered with ") != std::string::npos) {
          ++registered;
          break;
        }
    }
    if (registered == o_.workers) return true;
    if (std::chrono::steady_clock::now() > deadline || give_up()) return false;
    std::this_thread::sleep_for(50ms);
  }
}

void sweep_executor::impl::monitor(std::stop_token st) {
  const auto started = std::chrono::steady_clock::now();
  bool ever_registered = false;
  while (!st.stop_requested()) {
    // Attached: the controller is another process; its workers are not counted here.
    std::size_t alive = 0;
    if (controller_)
      for (const auto& w : controller_->workers()) alive += w.alive ? 1 : 0;
    ever_registered = ever_registered || alive > 0 || !controller_;
    if (o_.kind == executor_kind::local) {
      std::size_t running = 0;
      for (pid_t& pid : pids_) {
        if (pid <= 0) continue;
        int s = 0;
        if (::waitpid(pid, &s, WNOHANG) == pid)
          pid = -pid;  // reaped
        else
          ++running;
      }
      {
        std::lock_guard lock(mutex_);
        progress_ = controller_ ? "workers " + std::to_string(alive) + " of " + std::to_string(o_.workers)
                                : "workers " + std::to_string(running) + " running, attached to " + address_;
      }
      if (running == 0) fail("every local worker exited (logs in " + work_dir_ + ")");
    } else {
      auto q = slurm_.queue(job_);
      if (q) {
        const auto n = count_tasks(*q);
        {
          std::lock_guard lock(mutex_);
          progress_ = "Slurm " + job_ + ": " + std::to_string(n.running) + " running, " + std::to_string(n.pending) +
                      " pending; " +
                      (controller_ ? std::to_string(alive) + " workers connected" : "attached to " + address_);
        }
        if (q->empty() && (alive == 0 || !controller_))
          fail("the Slurm job " + job_ + " left the queue with no worker connected (logs in " + work_dir_ + ")");
        if (!ever_registered && n.running > 0 && std::chrono::steady_clock::now() - started > o_.worker_start_timeout)
          fail(std::to_string(n.running) + " Slurm tasks of job " + job_ + " run but none reached the controller at " +
               address_ + " within " + std::to_string(o_.worker_start_timeout.count() / 1000) +
               " s: give --listen an address of this host that the nodes reach (logs in " + work_dir_ + ")");
      } else {
        std::lock_guard lock(mutex_);
        progress_ = "Slurm " + job_ + ": " + q.error().message();
      }
    }
    for (auto waited = 0ms; waited < monitor_every && !st.stop_requested(); waited += 50ms) std::this_thread::sleep_for(50ms);
  }
}

result<experiments::trial_runs> sweep_executor::impl::run(const experiments::experiment_spec& spec) {
  if (remote_) {
    auto r = remote_(spec);
    if (!r.ok() && (r.error().code() == error_code::cancelled || !failure().empty())) {
      const std::string why = failure();
      return status(error_code::cancelled, why.empty() ? r.error().message() : why);
    }
    return r;
  }
  experiments::experiment_spec s = spec;
  ROCELAB_RETURN_IF_ERROR(experiments::inline_file_references(s));
  auto r = controller_->run_trial({experiments::to_yaml(s), s.name + ".yaml", s.seed, s.repeats}, [this] {
    return (o_.stop_requested && o_.stop_requested()) || !failure().empty();
  });
  if (!r.completed) {
    const std::string why = failure();
    return status(error_code::cancelled, why.empty() ? r.error : why);
  }
  if (!r.error.empty()) return status(error_code::invalid_argument, r.error);
  experiments::trial_runs out;
  for (auto& rep : r.repeats) {
    out.seeds.push_back(rep.seed);
    out.repeats.push_back(std::move(rep.records));
  }
  out.placement = controller::placement_parameters(r);
  return out;
}

std::vector<std::string> sweep_executor::impl::end(bool cancel) {
  if (ended_) return {};
  ended_ = true;
  monitor_.request_stop();
  if (monitor_.joinable()) monitor_.join();
  cancel = cancel || !failure().empty();
  // Workers attached to a running controller stay connected to it: the sweep ends them.
  const bool stop_workers = cancel || !controller_;
  std::vector<std::string> states;
  if (o_.kind == executor_kind::slurm && !job_.empty()) {
    if (stop_workers) {
      if (auto st = slurm_.cancel(job_); !st.ok()) log(st.message());
    }
    controller_.reset();  // closes the workers' sessions: they exit
    const auto deadline = std::chrono::steady_clock::now() + (stop_workers ? slurm_cancel_wait : slurm_drain_wait);
    while (std::chrono::steady_clock::now() < deadline) {
      auto q = slurm_.queue(job_);
      if (q && q->empty()) break;
      std::this_thread::sleep_for(200ms);
    }
    if (auto q = slurm_.queue(job_); q && !q->empty()) {
      log("Slurm job " + job_ + " still queued; cancelling it");
      if (auto st = slurm_.cancel(job_); !st.ok()) log(st.message());
    }
    if (auto shown = slurm_.show(job_))
      for (const auto& t : *shown) states.push_back(t.id + " " + t.state + (t.node.empty() ? "" : " on " + t.node));
  } else {
    if (stop_workers)
      for (pid_t pid : pids_)
        if (pid > 0) ::kill(pid, SIGTERM);
    controller_.reset();
    const auto deadline = std::chrono::steady_clock::now() + local_exit_wait;
    for (pid_t& pid : pids_) {
      while (pid > 0) {
        int s = 0;
        if (::waitpid(pid, &s, WNOHANG) == pid) break;
        if (std::chrono::steady_clock::now() > deadline) {
          ::kill(pid, SIGKILL);
          ::waitpid(pid, &s, 0);
          break;
        }
        std::this_thread::sleep_for(20ms);
      }
      pid = 0;
    }
  }
  std::error_code ec;
  // An attached controller's token file is its owner's, not the sweep's.
  if (o_.controller.empty()) fs::remove(token_path_, ec);
  // The workers' logs stay where something went wrong; a sweep that ended well leaves none.
  if (!cancel && o_.work_dir.empty()) {
    fs::remove_all(work_dir_, ec);
    fs::remove(fs::path(work_dir_).parent_path(), ec);  // .rocelab/sweeps, when empty
    fs::remove(fs::path(work_dir_).parent_path().parent_path(), ec);
  }
  return states;
}

result<std::unique_ptr<sweep_executor>> sweep_executor::start(executor_options options) {
  if (options.kind == executor_kind::threads)
    return status(error_code::invalid_argument, "the threads executor runs in the sweep itself, not here");
  auto p = std::make_unique<impl>(std::move(options));
  if (auto st = p->start(); !st.ok()) return st;
  return std::unique_ptr<sweep_executor>(new sweep_executor(std::move(p)));
}

sweep_executor::sweep_executor(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
sweep_executor::~sweep_executor() = default;

experiments::trial_runner sweep_executor::runner() {
  return [p = impl_.get()](const experiments::experiment_spec& spec) { return p->run(spec); };
}

std::string sweep_executor::progress() const {
  std::lock_guard lock(impl_->mutex_);
  return impl_->progress_;
}

std::string sweep_executor::failure() const { return impl_->failure(); }
std::vector<std::string> sweep_executor::finish(bool interrupted) { return impl_->end(interrupted); }
const std::string& sweep_executor::slurm_job() const noexcept { return impl_->job_; }
std::string sweep_executor::controller_address() const { return impl_->address_; }

}  // namespace rocelab::cli
