// Workers: their sessions (register_worker, heartbeats both ways) and the sweep trials
// they run, through the trial queue (trial_queue.hpp holds the rules; this file the I/O).

#include <thread>

#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "controller_impl.hpp"
#include "rocelab/controller/trial_result_check.hpp"

namespace rocelab::controller {

using namespace rocelab::protocol;

namespace {
constexpr std::chrono::milliseconds trial_poll{50};
}  // namespace

worker_view controller::impl::view_of_worker(const worker_entry& w) const {
  worker_view v;
  v.name = w.info.name;
  v.host = w.info.host;
  v.address = w.address;
  v.slurm_job_id = w.info.slurm_job_id;
  v.slurm_array_task_id = w.info.slurm_array_task_id;
  v.slurm_node = w.info.slurm_node;
  v.alive = w.alive;
  v.busy = trials_.running_on(w.key).has_value();
  v.trials_done = w.trials_done;
  return v;
}

asio::awaitable<void> controller::impl::worker_session(std::shared_ptr<connection> conn, register_worker r) {
  auto w = std::make_shared<worker_entry>();
  w->key = r.name + "#" + std::to_string(++worker_sessions_);
  w->address = conn->peer();
  w->conn = conn;
  w->info = std::move(r);
  const std::string name = w->info.name;
  if (auto it = workers_.find(name); it != workers_.end() && it->second->alive) {
    log("worker " + name + " registered again from " + conn->peer() + "; closing the old session");
    it->second->conn->close();
  }
  workers_[name] = w;
  if (stopping_) {
    conn->send(error_message{0, "unavailable", "the controller is stopping"});
    conn->close();
  } else {
    conn->send(welcome{w->key, options_.heartbeat_interval.count(), options_.deadman.count()});
    std::string where = w->info.host;
    if (!w->info.slurm_job_id.empty())
      where += ", Slurm job " + w->info.slurm_job_id +
               (w->info.slurm_array_task_id.empty() ? "" : "_" + w->info.slurm_array_task_id) + " on " +
               w->info.slurm_node;
    log("worker " + name + " registered from " + conn->peer() + " (" + where + ")");
    asio::co_spawn(io_, worker_heartbeats(w), asio::detached);
    dispatch_trials();
  }

  std::string why = "connection closed";
  while (conn->is_open()) {
    auto m = co_await conn->read(options_.agent_timeout);
    if (!m) {
      why = m.error().message();
      break;
    }
    if (auto* res = std::get_if<trial_result>(&*m)) {
      if (auto st = on_trial_result(*w, std::move(*res)); !st.ok()) {
        why = "dropped: " + st.message();
        break;
      }
    } else if (!std::holds_alternative<heartbeat>(*m)) {
      conn->send(error_message{0, "invalid argument",
                               std::string("controller does not take ") + to_string(type_of(*m)) + " from workers"});
    }
  }
  conn->close();
  w->alive = false;
  // Forgotten once gone (a newer session of its name stays).
  if (auto it = workers_.find(name); it != workers_.end() && it->second == w) workers_.erase(it);
  w->partial.reset();
  w->partial_pieces = w->partial_bytes = w->partial_string_bytes = 0;
  const bool others = any_worker_connected();
  if (auto running = trials_.running_on(w->key)) {
    log("worker " + name + " lost with trial " + std::to_string(*running) + ": " + why);
    if (auto failed = trials_.worker_lost(w->key, why, others)) finish_trial(*failed, nullptr, nullptr);
  } else if (!stopping_) {
    log("worker " + name + " gone: " + why);
  }
  if (!others)
    for (const auto& f : trials_.no_worker_left("no worker is connected")) finish_trial(f, nullptr, nullptr);
  dispatch_trials();
}

bool controller::impl::any_worker_connected() const {
  for (const auto& [n, w] : workers_)
    if (w->alive && w->conn->is_open()) return true;
  return false;
}

asio::awaitable<void> controller::impl::worker_heartbeats(std::shared_ptr<worker_entry> w) {
  asio::steady_timer t(io_);
  for (std::uint64_t seq = 1; w->alive && w->conn->is_open(); ++seq) {
    w->conn->send(heartbeat{seq});
    t.expires_after(options_.heartbeat_interval);
    co_await t.async_wait(nothrow);
  }
}

status controller::impl::on_trial_result(worker_entry& w, trial_result piece) {
  if (w.given.empty() || piece.trial != w.given.front().trial || piece.attempt != w.given.front().attempt)
    return status(error_code::invalid_argument,
                  "it answered trial " + std::to_string(piece.trial) + " attempt " + std::to_string(piece.attempt) +
                      (w.given.empty() ? ", but was given none"
                                       : ", but was given trial " + std::to_string(w.given.front().trial) +
                                             " attempt " + std::to_string(w.given.front().attempt)));
  const std::string trial = "trial " + std::to_string(piece.trial);
  if (trials_.running_on(w.key) != piece.trial) {
    // Its caller gave up on the trial (cancelled): its pieces are read and dropped, never held.
    if (piece.done) {
      w.given.pop_front();
      log("worker " + w.info.name + ": result for " + trial + " dropped: the trial is finished");
    }
    return status::success();
  }
  // Counted before the piece is appended: past the cap nothing more is allocated.
  ++w.partial_pieces;
  w.partial_string_bytes += string_bytes(piece);
  w.partial_bytes = w.partial_string_bytes + 2 * (record_bytes(piece) + (w.partial ? record_bytes(*w.partial) : 0));
  if (!piece.done) {
    if (w.partial_pieces >= options_.max_trial_result_pieces)
      return status(error_code::resource_exhausted, "its result for " + trial + " did not end within " +
                                                        std::to_string(options_.max_trial_result_pieces) + " pieces");
    if (w.partial_bytes > options_.max_partial_result_bytes)
      return status(error_code::resource_exhausted, "its unfinished result for " + trial + " would hold " +
                                                        std::to_string(w.partial_bytes) + " bytes (limit " +
                                                        std::to_string(options_.max_partial_result_bytes) + ")");
  }
  if (w.partial)
    append_trial_piece(*w.partial, std::move(piece));
  else
    w.partial = std::move(piece);
  if (!w.partial->done) return status::success();
  w.given.pop_front();
  trial_result r = std::move(*w.partial);
  w.partial.reset();
  w.partial_pieces = w.partial_bytes = w.partial_string_bytes = 0;
  if (const trial_work* work = trials_.work(r.trial))
    if (auto st = check_trial_result(r, *work); !st.ok())
      return st.with_context("its result for " + trial + " was refused");
  if (auto f = trials_.complete(w.key, r.trial)) {
    ++w.trials_done;
    finish_trial(*f, &r, &w);
  }
  dispatch_trials();
  return status::success();
}

void controller::impl::dispatch_trials() {
  if (stopping_) return;
  for (auto& [name, w] : workers_) {
    if (trials_.queued() == 0) return;
    if (!w->alive || !w->conn->is_open()) continue;
    auto plan = trials_.assign(w->key);
    if (!plan) continue;
    const trial_work* work = trials_.work(plan->trial);
    w->given.push_back(*plan);
    if (!w->conn->send(trial_assignment{plan->trial, plan->attempt, work->spec_yaml, work->source_name})) {
      // The send closed the connection; its session re-queues the trial as it ends.
      continue;
    }
  }
}

void controller::impl::finish_trial(const trial_finish& f, trial_result* result, const worker_entry* w) {
  auto it = trial_waiters_.find(f.trial);
  if (it == trial_waiters_.end()) return;
  auto done = std::move(it->second);
  trial_waiters_.erase(it);
  remote_trial out;
  out.completed = f.completed;
  out.error = f.error;
  out.attempts = f.attempts;
  if (result) {
    if (!result->error.empty()) out.error = result->error;
    out.repeats = std::move(result->repeats);
  }
  if (w) out.worker = view_of_worker(*w);
  done(std::move(out));
}

std::map<std::string, std::string> placement_parameters(const remote_trial& t) {
  std::map<std::string, std::string> p;
  p["worker.name"] = t.worker.name;
  p["worker.host"] = t.worker.host;
  p["worker.attempts"] = std::to_string(t.attempts);
  if (!t.worker.slurm_job_id.empty()) {
    p["worker.slurm_job"] =
        t.worker.slurm_job_id + (t.worker.slurm_array_task_id.empty() ? "" : "_" + t.worker.slurm_array_task_id);
    p["worker.node"] = t.worker.slurm_node;
  } else {
    p["worker.node"] = t.worker.host;
  }
  return p;
}

std::vector<worker_view> controller::workers() const {
  return run_on<std::vector<worker_view>>(impl_->io_, [this]() -> asio::awaitable<std::vector<worker_view>> {
    std::vector<worker_view> out;
    for (const auto& [n, w] : impl_->workers_) out.push_back(impl_->view_of_worker(*w));
    co_return out;
  });
}

bool controller::wait_for_workers(std::size_t count, std::chrono::milliseconds timeout,
                                  const std::function<bool()>& give_up) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    std::size_t alive = 0;
    for (const auto& w : workers()) alive += w.alive ? 1 : 0;
    if (alive >= count) return true;
    if (std::chrono::steady_clock::now() > deadline || (give_up && give_up())) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

remote_trial controller::run_trial(trial_work work, const std::function<bool()>& cancel_requested) {
  auto answer = std::make_shared<std::promise<remote_trial>>();
  auto future = answer->get_future();
  auto id = std::make_shared<std::atomic<std::uint64_t>>(0);
  asio::post(impl_->io_, [this, work = std::move(work), answer, id]() mutable {
    if (impl_->stopping_) {
      remote_trial r;
      r.error = "cancelled: the controller is stopping";
      answer->set_value(std::move(r));
      return;
    }
    const std::uint64_t t = impl_->trials_.add(std::move(work));
    impl_->trial_waiters_[t] = [answer](remote_trial r) { answer->set_value(std::move(r)); };
    id->store(t);
    impl_->dispatch_trials();
  });
  bool cancel_sent = false;
  while (future.wait_for(trial_poll) != std::future_status::ready) {
    if (cancel_sent || !cancel_requested || !cancel_requested()) continue;
    cancel_sent = true;
    asio::post(impl_->io_, [this, id] {
      if (auto f = impl_->trials_.cancel(id->load(), "cancelled: the sweep was stopped"))
        impl_->finish_trial(*f, nullptr, nullptr);
    });
  }
  return future.get();
}

}  // namespace rocelab::controller
