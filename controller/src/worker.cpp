#include "rocelab/controller/worker.hpp"

#include <unistd.h>

#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "rocelab/experiments/run/backend.hpp"
#include "rocelab/experiments/run/backend_traits.hpp"
#include "rocelab/experiments/spec/spec_files.hpp"
#include "rocelab/protocol/connection.hpp"
#include "rocelab/protocol/security.hpp"

namespace rocelab::controller {

using namespace rocelab::protocol;
namespace asio = boost::asio;

namespace {

constexpr std::chrono::milliseconds stop_poll{100};

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

asio::awaitable<void> send_pieces(std::shared_ptr<connection> conn, std::vector<trial_result> pieces);

// The trials of one session, run in order on a thread of their own; each result is sent
// from the io thread.
class trial_runner_thread {
 public:
  trial_runner_thread(asio::io_context& io, std::shared_ptr<connection> conn) : io_(io), conn_(std::move(conn)) {
    thread_ = std::jthread([this](std::stop_token st) { loop(st); });
  }
  ~trial_runner_thread() {
    thread_.request_stop();
    cv_.notify_all();
  }
  trial_runner_thread(const trial_runner_thread&) = delete;
  trial_runner_thread& operator=(const trial_runner_thread&) = delete;

  void add(trial_assignment a) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(a));
    }
    cv_.notify_all();
  }

 private:
  void loop(std::stop_token st) {
    while (!st.stop_requested()) {
      trial_assignment a;
      {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [&] { return st.stop_requested() || !queue_.empty(); });
        if (st.stop_requested()) return;
        a = std::move(queue_.front());
        queue_.pop_front();
      }
      auto r = std::make_shared<trial_result>(run_assigned_trial(a, [&st] { return st.stop_requested(); }));
      if (st.stop_requested()) return;
      asio::co_spawn(io_, send_pieces(conn_, split_trial_result(std::move(*r))), asio::detached);
    }
  }

  asio::io_context& io_;
  std::shared_ptr<connection> conn_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<trial_assignment> queue_;
  std::jthread thread_;  // last: it stops and joins before the queue goes
};

// A result's pieces, each queued once the one before is written: a large run's records
// never sit in the send queue all at once (its bound would close the connection).
asio::awaitable<void> send_pieces(std::shared_ptr<connection> conn, std::vector<trial_result> pieces) {
  asio::steady_timer t(co_await asio::this_coro::executor);
  for (const trial_result& piece : pieces) {
    while (conn->is_open() && conn->queued_frames() > 1) {
      t.expires_after(std::chrono::milliseconds(2));
      co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
    }
    if (!conn->is_open()) co_return;
    if (conn->send(piece)) continue;
    if (!conn->is_open()) co_return;
    // Not sent on an open connection: a piece over the frame limit (records with huge
    // names). The trial is answered, failed, saying so.
    conn->send(trial_result{piece.trial, piece.attempt,
                            "a piece of the trial's records exceeds the protocol's frame limit of " +
                                std::to_string(max_body_bytes) + " bytes",
                            {}, true});
    co_return;
  }
}

asio::awaitable<void> heartbeats(std::shared_ptr<connection> conn, std::chrono::milliseconds every) {
  asio::steady_timer t(co_await asio::this_coro::executor);
  for (std::uint64_t seq = 1; conn->is_open(); ++seq) {
    conn->send(heartbeat{seq});
    t.expires_after(every);
    co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
  }
}

asio::awaitable<void> stop_watch(std::shared_ptr<connection> conn, const worker_options& o, bool& stopped) {
  asio::steady_timer t(co_await asio::this_coro::executor);
  while (conn->is_open()) {
    t.expires_after(stop_poll);
    co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
    if (conn->is_open() && o.stop_requested()) {
      stopped = true;
      conn->close();
    }
  }
}

// GCC 12 reports operator new/delete of this coroutine's frame as mismatched (both are
// Asio's awaitable_frame_base operators): a false positive, silenced for this function.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
asio::awaitable<void> serve(asio::io_context& io, asio::ssl::context& tls, const worker_options& o, status& out) {
  auto ex = co_await asio::this_coro::executor;
  auto conn = co_await connect_to(ex, tls, o.controller, o.connect_timeout);
  if (!conn) {
    out = conn.error().with_context("worker " + o.identity.name);
    io.stop();
    co_return;
  }
  auto c = *conn;
  c->start_writer();
  c->send(o.identity);
  auto w = co_await c->read(o.connect_timeout);
  if (!w || !std::holds_alternative<welcome>(*w)) {
    c->close();
    std::string why = !w ? w.error().message()
                         : std::holds_alternative<error_message>(*w) ? std::get<error_message>(*w).message
                                                                     : std::string("no welcome");
    out = status(error_code::io_error, "controller " + o.controller + " did not take worker " + o.identity.name + ": " + why);
    io.stop();
    co_return;
  }
  const welcome& hi = std::get<welcome>(*w);
  const auto beat = std::chrono::milliseconds(std::max<std::int64_t>(hi.heartbeat_interval_ms, 10));
  const auto deadman = std::chrono::milliseconds(std::max<std::int64_t>(hi.deadman_ms, 4 * beat.count()));
  if (o.log) o.log("registered with " + o.controller + " as " + hi.session);
  asio::co_spawn(ex, heartbeats(c, beat), asio::detached);
  bool stopped = false;
  if (o.stop_requested) asio::co_spawn(ex, stop_watch(c, o, stopped), asio::detached);
  std::optional<trial_runner_thread> runner;
  runner.emplace(io, c);
  std::uint32_t trials = 0;
  while (c->is_open()) {
    auto m = co_await c->read(deadman);
    if (!m) {
      if (stopped)
        out = status(error_code::cancelled, "worker " + o.identity.name + " stopped after " + std::to_string(trials) + " trials");
      else if (m.error().code() == error_code::cancelled)
        out = status(error_code::unavailable, "worker " + o.identity.name + ": the controller at " + o.controller +
                                                   " went silent (" + m.error().message() + ")");
      else if (o.log)
        o.log("the controller ended the session after " + std::to_string(trials) + " trials");
      break;
    }
    if (auto* a = std::get_if<trial_assignment>(&*m)) {
      ++trials;
      runner->add(std::move(*a));
    } else if (auto* e = std::get_if<error_message>(&*m)) {
      if (o.log) o.log("controller: " + e->message);
    }
  }
  c->close();
  io.stop();  // a trial still running is abandoned: the controller re-queues it
  co_return;
}
#pragma GCC diagnostic pop

}  // namespace

register_worker worker_identity() {
  register_worker r;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "unknown");
  r.host = host;
  r.pid = ::getpid();
  r.capabilities = {"twin"};
  r.threads = 1;
  r.slurm_job_id = env("SLURM_ARRAY_JOB_ID");
  if (r.slurm_job_id.empty()) r.slurm_job_id = env("SLURM_JOB_ID");
  r.slurm_array_task_id = env("SLURM_ARRAY_TASK_ID");
  r.slurm_node = env("SLURMD_NODENAME");
  r.name = r.host + "-" + std::to_string(r.pid);
  if (!r.slurm_job_id.empty())
    r.name = r.host + "-" + r.slurm_job_id + (r.slurm_array_task_id.empty() ? "" : "_" + r.slurm_array_task_id) + "-" +
             std::to_string(r.pid);
  if (r.name.size() > 128) r.name.resize(128);
  return r;
}

trial_result run_assigned_trial(const trial_assignment& a, const std::function<bool()>& cancel) {
  trial_result r{a.trial, a.attempt, "", {}, true};
  auto spec = experiments::load_spec(a.spec_yaml, a.source_name.empty() ? "assigned trial" : a.source_name);
  status bad = spec ? status::success() : spec.error();
  if (bad.ok()) bad = experiments::refuse_file_references(*spec);
  if (bad.ok()) bad = experiments::validate(*spec);
  if (bad.ok() && !experiments::backend_traits_of(spec->backend).runs_in_controller)
    bad = status(error_code::unsupported, "workers run the twin; the trial's spec names backend " + spec->backend);
  if (!bad.ok()) {
    r.error = bad.message();
    return r;
  }
  experiments::run_hooks hooks;
  hooks.cancel_requested = cancel;
  auto ran = experiments::core_backends().run(*spec, hooks);
  if (!ran) {
    r.error = ran.error().message();
    return r;
  }
  for (std::size_t i = 0; i < ran->repeats.size(); ++i)
    r.repeats.push_back(trial_repeat{static_cast<std::uint32_t>(i), ran->seeds[i], std::move(ran->repeats[i])});
  return r;
}

status run_worker(const worker_options& options) {
  auto tls = tls_context::make(tls_role::client, options.token);
  if (!tls) return tls.error();
  asio::io_context io;
  status out = status::success();
  asio::co_spawn(io, serve(io, (*tls)->native(), options, out), asio::detached);
  io.run();
  return out;
}

}  // namespace rocelab::controller
