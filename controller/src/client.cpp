#include "rocelab/controller/client.hpp"

#include <optional>
#include <random>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "rocelab/controller/stored_outcome.hpp"
#include "rocelab/experiments/run/summary.hpp"
#include "rocelab/experiments/spec/spec_files.hpp"
#include "rocelab/protocol/connection.hpp"
#include "rocelab/protocol/security.hpp"

namespace rocelab::controller {

using namespace rocelab::protocol;

namespace {

using clock_type = std::chrono::steady_clock;

constexpr std::chrono::seconds client_heartbeat{5};

asio::awaitable<void> heartbeats(std::shared_ptr<connection> conn) {
  asio::steady_timer t(co_await asio::this_coro::executor);
  for (std::uint64_t seq = 1; conn->is_open(); ++seq) {
    t.expires_after(client_heartbeat);
    co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
    conn->send(heartbeat{seq});
  }
}

// Closes the connection once the caller asks to cancel; `cancelled` tells the waiting
// loop why its read ended.
asio::awaitable<void> cancel_watch(std::shared_ptr<connection> conn, const submit_options& o, bool& cancelled) {
  asio::steady_timer t(co_await asio::this_coro::executor);
  while (conn->is_open()) {
    t.expires_after(o.cancel_poll);
    co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
    if (conn->is_open() && o.cancel_requested()) {
      cancelled = true;
      conn->close();
    }
  }
}

enum class attempt_end {
  settled,  // `out` holds the answer, a refusal, the cancel or the client's timeout
  lost,     // the connection ended before an answer: ask again
};

// One connection: hello, the request, and the wait for its answer.
asio::awaitable<attempt_end> attempt(std::shared_ptr<connection> c, const submit_options& o, const submit_run& request,
                                     clock_type::time_point deadline, bool& cancelled,
                                     std::optional<result<run_finished>>& out, std::string& lost_why) {
  auto ex = co_await asio::this_coro::executor;
  c->start_writer();
  c->send(hello{peer_role::client, "rocelab-run", {}, 0});
  auto w = co_await c->read(o.connect_timeout);
  if (!w || !std::holds_alternative<welcome>(*w)) {
    c->close();
    if (w) {
      out = status(error_code::io_error, "controller " + o.controller + " did not welcome us");
      co_return attempt_end::settled;
    }
    lost_why = w.error().message();
    co_return attempt_end::lost;
  }
  asio::co_spawn(ex, heartbeats(c), asio::detached);
  if (o.cancel_requested) asio::co_spawn(ex, cancel_watch(c, o, cancelled), asio::detached);
  c->send(request);
  while (c->is_open() && clock_type::now() < deadline) {
    auto m = co_await c->read(std::chrono::duration_cast<std::chrono::milliseconds>(client_heartbeat * 4));
    if (!m) {
      if (cancelled) {
        out = status(error_code::cancelled, "cancelled while waiting for the run on " + o.controller +
                                                "; the controller stores it as interrupted");
        co_return attempt_end::settled;
      }
      lost_why = m.error().message();
      co_return attempt_end::lost;
    }
    if (auto* f = std::get_if<run_finished>(&*m); f && f->request == request.request) {
      out = std::move(*f);
      break;
    }
    if (auto* e = std::get_if<error_message>(&*m)) {
      out = status(error_code::invalid_argument, "controller: " + e->message);
      break;
    }
  }
  if (!out) out = status(error_code::cancelled, "the run did not finish within the client's timeout");
  c->close();
  co_return attempt_end::settled;
}

// Waits `d`, polling the caller's cancel; true when it asked to cancel.
asio::awaitable<bool> pause_unless_cancelled(const submit_options& o, std::chrono::milliseconds d) {
  asio::steady_timer t(co_await asio::this_coro::executor);
  const auto until = clock_type::now() + d;
  while (clock_type::now() < until) {
    if (o.cancel_requested && o.cancel_requested()) co_return true;
    t.expires_after(std::min<clock_type::duration>(o.cancel_poll, until - clock_type::now()));
    co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
  }
  co_return o.cancel_requested && o.cancel_requested();
}

// The outcome from the store when the controller did not come back; nullopt when the
// store cannot tell.
std::optional<run_finished> from_store(const submit_options& o, const std::string& submission) {
  if (o.store_path.empty()) return std::nullopt;
  auto store = store::run_store::open(o.store_path, store::open_mode::read_only);
  if (!store) return std::nullopt;
  auto found = stored_outcome(*store, submission);
  if (!found || !*found) return std::nullopt;
  return std::move(**found);
}

asio::awaitable<void> submit(asio::io_context& io, asio::ssl::context& tls, const submit_options& o,
                             submit_run request, std::optional<result<run_finished>>& out) {
  auto ex = co_await asio::this_coro::executor;
  const auto deadline = clock_type::now() + o.run_timeout;
  bool cancelled = false;
  std::optional<clock_type::time_point> lost_at;  // when the first connection was lost
  std::string lost_why;
  while (!out) {
    auto conn = co_await connect_to(ex, tls, o.controller, o.connect_timeout);
    if (!conn) {
      if (!lost_at) {
        out = conn.error();  // never reached: nothing was submitted
        break;
      }
      lost_why = conn.error().message();
    } else if (co_await attempt(*conn, o, request, deadline, cancelled, out, lost_why) == attempt_end::settled) {
      break;
    }
    if (!lost_at) lost_at = clock_type::now();
    if (clock_type::now() - *lost_at >= o.reconnect_window || clock_type::now() >= deadline) break;
    if (co_await pause_unless_cancelled(o, o.reconnect_interval)) {
      out = status(error_code::cancelled, "cancelled while reconnecting to " + o.controller + " for submission " +
                                              request.submission);
      break;
    }
    request.retry = true;
  }
  if (!out) {
    if (auto stored = from_store(o, request.submission)) {
      stored->request = request.request;
      out = std::move(*stored);
    } else {
      out = status(error_code::unavailable,
                   "lost the controller at " + o.controller + " while it ran submission " + request.submission + " (" +
                       lost_why + "), and it did not answer again within " +
                       std::to_string(o.reconnect_window.count() / 1000) + " s; its store has the run's outcome " +
                       "under the parameter " + submission_parameter + "=" + request.submission);
    }
  }
  io.stop();  // heartbeat coroutines may be mid-wait; nothing else is left to do
}

}  // namespace

std::string new_submission_id() {
  std::random_device rd;
  static constexpr char hex[] = "0123456789abcdef";
  std::string id = "s-";
  for (int i = 0; i < 4; ++i) {
    const std::uint32_t v = rd();
    for (int k = 0; k < 8; ++k) id += hex[(v >> (4 * k)) & 0xf];
  }
  return id;
}

result<run_finished> submit_spec(const submit_options& options, const std::string& spec_yaml,
                                 const std::string& source_name, const std::vector<std::string>& sets) {
  auto tls = tls_context::make(tls_role::client, options.token);
  if (!tls) return tls.error();
  asio::io_context io;
  std::optional<result<run_finished>> out;
  submit_run request{1, spec_yaml, source_name, sets, options.submission.empty() ? new_submission_id() : options.submission,
                     false};
  if (!valid_submission_id(request.submission))
    return status(error_code::invalid_argument, "submission id '" + request.submission + "': expected up to " +
                                                    std::to_string(max_submission_id_chars) + " of [A-Za-z0-9_-]");
  asio::co_spawn(io, submit(io, (*tls)->native(), options, std::move(request), out), asio::detached);
  io.run();
  if (!out) return status(error_code::internal, "submit ended without an answer");
  return std::move(*out);
}

experiments::trial_runner remote_trial_runner(submit_options options) {
  return [options](const experiments::experiment_spec& spec) -> result<experiments::trial_runs> {
    experiments::experiment_spec sent = spec;
    ROCELAB_RETURN_IF_ERROR(experiments::inline_file_references(sent));
    submit_options mine = options;
    mine.submission.clear();  // one submission per trial
    auto done = submit_spec(mine, experiments::to_yaml(sent), "<tuning trial>", {});
    if (!done.ok()) return std::move(done).error();
    if (done->status != "completed")
      return status(done->status == "interrupted" ? error_code::cancelled : error_code::unavailable,
                    "run " + std::to_string(done->run) + " on " + options.controller + " " + done->status +
                        (done->error.empty() ? "" : ": " + done->error));
    auto parsed = experiments::parse_summary_json(done->summary_json);
    if (!parsed.ok()) return std::move(parsed).error().with_context("the summary of run " + std::to_string(done->run));
    experiments::trial_runs r;
    r.seeds = parsed->aggregate.seeds;
    r.summaries = parsed->each.empty() ? std::vector<experiments::run_summary>{parsed->aggregate} : parsed->each;
    r.summary_json = done->summary_json;
    r.run_id = done->run;
    return r;
  };
}

}  // namespace rocelab::controller
