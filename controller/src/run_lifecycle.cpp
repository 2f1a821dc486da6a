// A run's lifecycle: a client's submission (attached to the run of the same submission id
// when one is in flight, answered from the store for a retry it already has), the run
// stored `running`, its backend, its records stored in bounded batches, and its outcome
// (completed, partial, interrupted, failed) stored and sent to every waiting connection.

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <optional>
#include <set>

#include <boost/asio/post.hpp>

#include "controller_impl.hpp"
#include "lab_backend.hpp"
#include "rocelab/controller/stored_outcome.hpp"
#include "rocelab/experiments/calibration/calibration_store.hpp"
#include "rocelab/experiments/run/backend_traits.hpp"
#include "rocelab/experiments/spec/spec_files.hpp"
#include "rocelab/experiments/run/summary.hpp"
#include "rocelab/experiments/lab/virtual_backend.hpp"
#include "rocelab/experiments/run/run_session.hpp"

namespace rocelab::controller {

using namespace rocelab::protocol;

void submission_state::attach(std::shared_ptr<connection> conn, std::uint64_t request) {
  std::lock_guard lock(mutex);
  waiters.emplace_back(std::move(conn), request);
}

bool submission_state::any_open() {
  std::lock_guard lock(mutex);
  return std::any_of(waiters.begin(), waiters.end(), [](const auto& w) { return w.first->is_open(); });
}

std::vector<submission_state::waiter> submission_state::take() {
  std::lock_guard lock(mutex);
  return std::move(waiters);
}

asio::awaitable<void> controller::impl::client_session(std::shared_ptr<connection> conn) {
  const std::uint64_t id = ++next_connection_;
  clients_.emplace(id, conn);
  struct client_entry {
    impl* self;
    std::uint64_t id;
    ~client_entry() { self->clients_.erase(id); }
  } entry{this, id};
  auto runs = std::make_shared<std::size_t>(0);  // this connection's runs in flight (io thread)
  conn->send(welcome{"client-" + std::to_string(++sessions_), options_.heartbeat_interval.count(), 0});
  while (conn->is_open()) {
    // Clients may wait long for a run; they heartbeat meanwhile.
    auto m = co_await conn->read(std::max(options_.agent_timeout * 4, std::chrono::milliseconds(30000)));
    if (!m) break;
    if (std::holds_alternative<heartbeat>(*m)) {
      conn->send(heartbeat{0});
    } else if (auto* s = std::get_if<submit_run>(&*m)) {
      submit(conn, std::move(*s), runs);
    } else {
      conn->send(error_message{0, "invalid argument",
                               std::string("controller does not take ") + to_string(type_of(*m)) + " from clients"});
    }
  }
  conn->close();
}

void controller::impl::submit(const std::shared_ptr<connection>& conn, submit_run s,
                              const std::shared_ptr<std::size_t>& runs) {
  if (stopping_) {
    conn->send(error_message{s.request, "unavailable", "the controller is stopping"});
    return;
  }
  if (!s.submission.empty())
    if (auto it = in_flight_.find(s.submission); it != in_flight_.end()) {
      it->second->attach(conn, s.request);
      return;
    }
  if (*runs >= options_.max_runs_per_client) {
    conn->send(error_message{s.request, "resource exhausted",
                             "this connection has " + std::to_string(*runs) + " runs in flight (limit " +
                                 std::to_string(options_.max_runs_per_client) + ")"});
    return;
  }
  start_client_run(conn, std::move(s), runs);
}

void controller::impl::start_client_run(const std::shared_ptr<connection>& conn, submit_run s,
                                        std::shared_ptr<std::size_t> runs) {
  auto state = std::make_shared<submission_state>();
  state->attach(conn, s.request);
  if (!s.submission.empty()) in_flight_[s.submission] = state;
  ++*runs;
  std::lock_guard lock(client_threads_mutex_);
  const std::uint64_t id = ++next_client_run_;
  client_threads_.emplace(id, std::thread([this, id, state, runs = std::move(runs), s = std::move(s)] {
    run_finished done = answer(s, state);
    asio::post(io_, [this, id, state, runs, done = std::move(done), submission = s.submission] {
      --*runs;
      if (auto it = in_flight_.find(submission); it != in_flight_.end() && it->second == state) in_flight_.erase(it);
      for (auto& [c, request] : state->take()) {
        run_finished mine = done;
        mine.request = request;
        c->send(mine);
      }
      reap_client_run(id);
    });
  }));
}

run_finished controller::impl::answer(const submit_run& s, const std::shared_ptr<submission_state>& state) {
  run_finished done;
  done.request = s.request;
  if (s.retry && !s.submission.empty()) {
    std::lock_guard lock(store_mutex_);
    auto stored = stored_outcome(*store_, s.submission);
    if (!stored) log(stored.error().message());
    if (stored && *stored) {
      done = std::move(**stored);
      done.request = s.request;
      return done;
    }
  }
  auto spec = experiments::load_spec(s.spec_yaml, s.source_name.empty() ? "submitted spec" : s.source_name);
  status bad = spec ? status::success() : spec.error();
  if (bad.ok())
    for (const auto& set : s.sets)
      if (bad = experiments::apply_override(*spec, set); !bad.ok()) break;
  // A received spec carries data: the controller opens no path a client names.
  if (bad.ok()) bad = experiments::refuse_file_references(*spec);
  if (bad.ok()) bad = experiments::validate(*spec);
  if (!bad.ok()) {
    done.status = "failed";
    done.error = bad.message();
    return done;
  }
  run_request request{s.source_name, s.sets, {}, [state] { return !state->any_open(); }, s.submission, {}};
  auto out = owner_->run_spec(*spec, request);
  if (!out) {
    done.status = "failed";
    done.error = out.error().message();
    return done;
  }
  if (options_.after_run_stored) options_.after_run_stored(out->run);
  done.run = out->run;
  done.status = out->status;
  done.error = out->error;
  std::vector<const run_records*> all;
  std::vector<experiments::run_summary> each;
  for (std::size_t i = 0; i < out->result.repeats.size(); ++i) {
    all.push_back(&out->result.repeats[i]);
    each.push_back(experiments::summarize({&out->result.repeats[i]}, {out->result.seeds[i]}));
  }
  done.summary_json = experiments::summary_json({std::to_string(out->run), spec->backend, spec->name},
                                                experiments::summarize(all, out->result.seeds), each);
  return done;
}

void controller::impl::join_client_runs() {
  while (true) {
    std::map<std::uint64_t, std::thread> all;
    {
      std::lock_guard lock(client_threads_mutex_);
      all.swap(client_threads_);
    }
    if (all.empty()) return;
    for (auto& [id, t] : all)
      if (t.joinable()) t.join();
  }
}

void controller::impl::reap_client_run(std::uint64_t id) {
  std::thread t;
  {
    std::lock_guard lock(client_threads_mutex_);
    auto it = client_threads_.find(id);
    if (it == client_threads_.end()) return;  // the destructor took it
    t = std::move(it->second);
    client_threads_.erase(it);
  }
  if (t.joinable()) t.join();
}

bool controller::impl::any_worker_alive() const {
  for (const auto& w : owner_->workers())
    if (w.alive) return true;
  return false;
}

// A twin run on a worker: the trial queue's rules (a lost worker's run goes to another, at
// most twice) for one run, its placement stored with it.
result<experiments::experiment_result> controller::run_on_worker(const experiments::experiment_spec& spec,
                                                                 std::int64_t run,
                                                                 const std::function<bool()>& cancel_requested) {
  experiments::experiment_spec sent = spec;
  ROCELAB_RETURN_IF_ERROR(experiments::inline_file_references(sent));
  auto r = run_trial({experiments::to_yaml(sent), spec.name + ".yaml", spec.seed, spec.repeats}, cancel_requested);
  experiments::experiment_result out;
  if (!r.completed) {
    // Cancelled by its requester: an interrupted run with nothing measured.
    if (cancel_requested && cancel_requested()) return out;
    return status(error_code::unavailable, "the run's workers: " + r.error);
  }
  if (!r.error.empty()) return status(error_code::internal, "on worker " + r.worker.name + ": " + r.error);
  {
    std::lock_guard lock(impl_->store_mutex_);
    for (const auto& [path, value] : placement_parameters(r))
      if (auto st = impl_->store_->set_parameter(run, path, value); !st.ok()) return st;
  }
  for (auto& rep : r.repeats) {
    out.seeds.push_back(rep.seed);
    out.repeats.push_back(std::move(rep.records));
  }
  return out;
}

result<run_outcome> controller::run_spec(const experiments::experiment_spec& spec, const run_request& request) {
  ROCELAB_RETURN_IF_ERROR(experiments::validate(spec));
  const experiments::backend_traits backend = experiments::backend_traits_of(spec.backend);
  if (backend.needs_lab) {
    if (!impl_->options_.inventory)
      return status(error_code::invalid_argument,
                    "backend " + spec.backend + ": the controller has no lab inventory (--inventory)");
    ROCELAB_RETURN_IF_ERROR(validate_against(spec, *impl_->options_.inventory));
  }
  store::new_run nr;
  nr.name = spec.name;
  nr.backend = spec.backend;
  nr.seed = spec.seed;
  nr.spec_yaml = experiments::to_yaml(experiments::local_backends(impl_->options_.virtual_options).as_run_here(spec));
  for (const auto& set : request.sets)
    if (const auto eq = set.find('='); eq != std::string::npos) nr.parameters[set.substr(0, eq)] = set.substr(eq + 1);
  if (!request.submission.empty()) nr.parameters[submission_parameter] = request.submission;
  // Where the virtual lab keeps the run's capture, for its report to link.
  if (const auto& file = impl_->options_.virtual_options.capture_file; backend.takes_capture_file && !file.empty()) {
    std::error_code ec;
    const auto absolute = std::filesystem::absolute(file, ec);
    nr.parameters["capture_file"] = ec ? file : absolute.string();
  }
  // The requester's cancel, or the controller stopping (cancel_runs).
  run_request req = request;
  req.cancel_requested = [this, theirs = request.cancel_requested] {
    return impl_->stopping_.load() || (theirs && theirs());
  };
  run_outcome out;
  // The run's session (experiments/run/run_session.hpp), used and ended under the store's
  // lock; one left unfinished by an exception is ended (failed) under it too.
  struct locked_session {
    std::mutex& store_mutex;
    std::optional<experiments::run_session> session;
    ~locked_session() {
      std::lock_guard lock(store_mutex);
      session.reset();
    }
  } stored{impl_->store_mutex_, std::nullopt};
  {
    std::lock_guard lock(impl_->store_mutex_);
    auto begun = experiments::run_session::begin(*impl_->store_, nr);
    if (!begun) return begun.error().with_context("storing the run");
    stored.session.emplace(std::move(*begun));
    out.run = stored.session->id();
  }
  // The run's agents are those registered at its start; one that leaves before the run
  // ends is stored lost for this run (the registry forgets it, so later runs do not list it).
  out.agents = agents();
  {
    std::lock_guard lock(impl_->store_mutex_);
    for (const auto& a : out.agents)
      (void)impl_->store_->add_agent(out.run, {a.name, a.address, a.clock_offset_ns, a.clock_uncertainty_ns, "ok"});
  }
  struct mark_departed {
    controller& self;
    std::int64_t run;
    std::vector<agent_view> agents;  // a copy: the outcome's list is moved out by the return
    ~mark_departed() {
      if (agents.empty()) return;
      std::set<std::pair<std::string, std::int64_t>> present;
      for (const auto& a : self.agents()) present.emplace(a.name, a.registered_ns);
      std::lock_guard lock(self.impl_->store_mutex_);
      for (const auto& a : agents)
        if (!present.contains({a.name, a.registered_ns}))
          (void)self.impl_->store_->add_agent(run, {a.name, a.address, a.clock_offset_ns, a.clock_uncertainty_ns, "lost"});
    }
  } departed{*this, out.run, out.agents};
  const auto fail = [&](const status& st) -> result<run_outcome> {
    std::lock_guard lock(impl_->store_mutex_);
    (void)stored.session->finish_failed(st.message());
    out.status = "failed";
    out.error = st.message();
    return out;
  };
  {
    std::lock_guard lock(impl_->store_mutex_);
    if (auto st = experiments::record_calibration(*impl_->store_, out.run, spec); !st.ok())
      return fail(st.with_context("storing the run's calibration"));
  }
  // twin runs in this process; virtual runs its NICs on the agents of the lab's hosts.
  auto virtual_options = impl_->options_.virtual_options;
  if (backend.kind == experiments::backend_kind::virtual_lab)
    // The agents end their NICs by themselves if the run outlives its limit by far (the
    // fleet stops them first, at the limit).
    virtual_options.nic_links = [this, run = out.run, timeout = 2 * experiments::virtual_run_limit(spec) +
                                                                 std::chrono::milliseconds(60'000)](
                                    const std::vector<traffic::soft_nic::fleet_host>& hosts,
                                    const std::vector<traffic::soft_nic::nic_process_config>& configs) {
      std::vector<std::string> transport_configs;
      for (const auto& c : configs) transport_configs.push_back(traffic::soft_nic::to_json(c).dump());
      return impl_->open_agent_links(hosts, job_kind::soft, transport_configs, run, timeout);
    };
  // The backends this run may use: twin and virtual (local_backends), and with a lab
  // inventory the real lab through this controller's agents.
  experiments::backend_registry backends = experiments::local_backends(virtual_options);
  std::optional<lab_backend_context> lab;
  if (impl_->options_.inventory) {
    lab.emplace(lab_backend_context{
        *impl_->options_.inventory, *this,
        [this](const std::vector<traffic::soft_nic::fleet_host>& hosts, job_kind kind,
               const std::vector<std::string>& configs, std::int64_t run, std::chrono::milliseconds timeout) {
          return impl_->open_agent_links(hosts, kind, configs, run, timeout);
        },
        [this](const std::string& line) { impl_->log(line); }, impl_->options_.switch_ssh,
        impl_->options_.switch_config_db});
    const std::string lab_name(experiments::backend_name(experiments::backend_kind::lab));
    if (auto st = backends.add(lab_name, std::make_shared<lab_backend>(*lab, out.run)); !st.ok()) return fail(st);
  }
  auto ran = backend.runs_in_controller && impl_->any_worker_alive()
                 ? run_on_worker(spec, out.run, req.cancel_requested)
                 : backends.run(spec, {req.on_repeat, req.cancel_requested, req.on_progress});
  if (!ran) {
    if (ran.error().code() == error_code::invalid_argument) {
      std::lock_guard lock(impl_->store_mutex_);
      (void)stored.session->finish_failed(ran.error().message());
      return ran.error();
    }
    return fail(ran.error());
  }
  const bool interrupted = req.cancel_requested();
  {
    std::lock_guard lock(impl_->store_mutex_);
    // Repeat i's records (what every agent reported for it) stored as repeat i, in bounded batches that stop at a cancel: storing
    // millions of queue samples must not outlast a Ctrl-C. A cancelled store keeps the
    // batches it committed; the run is then interrupted.
    store::append_options batches;
    batches.cancel_requested = request.cancel_requested;
    bool store_cancelled = false;
    // Every repeat says its index even when the store stops before it: the caller keeps
    // the records (a run directory's records.db, for `rocelab runs import`).
    for (std::uint32_t i = 0; i < ran->repeats.size(); ++i) set_repeat(ran->repeats[i], i);
    for (std::uint32_t i = 0; i < ran->repeats.size(); ++i) {
      if (store_cancelled) break;
      if (auto st = stored.session->append_repeat(i, ran->repeats[i], batches); !st.ok()) {
        if (st.code() == error_code::cancelled) {
          store_cancelled = true;
          continue;
        }
        // The run's records are not lost with the store: the caller gets them with the
        // store's error (run_outcome::store_error).
        const status store_error = st.with_context("storing records of run " + std::to_string(out.run));
        (void)stored.session->finish_failed(store_error.message());
        out.status = "failed";
        out.error = store_error.message();
        out.store_error = store_error.message();
        out.result = std::move(*ran);
        return out;
      }
    }
    if (interrupted || store_cancelled) {
      out.status = "interrupted";
      out.error = "cancelled by its requester (Ctrl-C, or the submitting client closed its connection) or by the "
                  "controller stopping; the records so far are kept";
      if (auto st = stored.session->finish_interrupted(out.error); !st.ok()) return st;
    } else {
      // Completed, or partial when flows did not complete or a host was lost; a degraded
      // run (virtual lab: a switch that overran its reaction budget) keeps its reasons as
      // the store's note.
      auto ending = stored.session->finish_ran(ran->repeats);
      if (!ending) {
        out.status = "failed";
        out.error = ending.error().message();
        out.store_error = out.error;
        out.result = std::move(*ran);
        return out;
      }
      out.status = store::to_string(ending->status);
      if (ending->status == store::run_status::partial) out.error = ending->note;
    }
  }
  out.result = std::move(*ran);
  return out;
}

}  // namespace rocelab::controller
