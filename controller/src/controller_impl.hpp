#pragma once
// The controller's state and the pieces that share it, private to controller/src. One
// io thread owns every connection and the maps below; run threads reach them through
// run_on() or asio::post. Each concept has its own source file:
//   controller.cpp     listening, TLS accept, first-frame dispatch, start and stop
//   registry.cpp       agents and their sessions: hello, heartbeats, clock probes, requests
//   jobs.cpp           jobs started at one instant on several agents, their reports
//   nic_relay.cpp      soft and verbs NICs driven through their agents; in-process agents
//   run_lifecycle.cpp  client submissions, storing a run, its outcome
//   lab_backend.cpp    backend lab (lab_backend.hpp)

#include <atomic>
#include <chrono>
#include <deque>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "clock_responder.hpp"
#include "rocelab/controller/controller.hpp"
#include "rocelab/protocol/clock_offset.hpp"
#include "rocelab/protocol/connection.hpp"
#include "rocelab/protocol/security.hpp"
#include "rocelab/store/run_store.hpp"
#include "rocelab/traffic/soft_nic/nic_fleet.hpp"

namespace rocelab::controller {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// Awaitable completions that yield (error_code, ...) instead of throwing.
inline constexpr auto nothrow = asio::as_tuple(asio::use_awaitable);

// Runs `make()` (an awaitable) on `io` and blocks the calling thread for its value.
// (co_spawn needs a default-constructible value type; result<T> is not, so it travels in
// an optional.)
template <typename T, typename F>
T run_on(asio::io_context& io, F make) {
  std::promise<std::optional<T>> p;
  auto f = p.get_future();
  asio::co_spawn(
      io, [make]() -> asio::awaitable<std::optional<T>> { co_return co_await make(); },
      [&p](std::exception_ptr e, std::optional<T> v) {
        if (e)
          p.set_exception(e);
        else
          p.set_value(std::move(v));
      });
  return std::move(*f.get());
}

// The connections waiting on one submitted run (several when a client retried while it
// ran). Added to on the io thread; read by the run's thread through any_open().
struct submission_state {
  using waiter = std::pair<std::shared_ptr<protocol::connection>, std::uint64_t>;  // connection, its request id

  std::mutex mutex;
  std::vector<waiter> waiters;

  void attach(std::shared_ptr<protocol::connection> conn, std::uint64_t request);
  [[nodiscard]] bool any_open();
  [[nodiscard]] std::vector<waiter> take();
};

// One registered agent (io thread only).
struct agent_entry {
  std::string name;
  std::string address;
  std::vector<std::string> transports;
  std::shared_ptr<protocol::connection> conn;
  protocol::clock_offset_estimator clock{16};      // TLS probes (clock_probe)
  protocol::clock_offset_estimator udp_clock{16};  // UDP exchanges (clock_exchange)
  std::uint64_t clock_cookie = 0;                  // its cookie at the clock service; 0: none
  std::int64_t registered_ns = 0;
  std::int64_t last_heard_ns = 0;
  bool alive = true;
  std::uint64_t probe_seq = 0;
  // The agent's host clock with its latest probe answer (offset through both hosts'
  // realtime clocks); none when it reports none.
  std::optional<protocol::host_offset> host;
  // Requests waiting for an answer (settings), by request id.
  std::map<std::uint64_t, std::function<void(result<protocol::message>)>> pending;
};

[[nodiscard]] agent_view view_of(const agent_entry& e);
// The agent's offset from whichever probes bound it more tightly at `use_at_ns`
// (controller clock; clock_offset.hpp ages each sample to it): the UDP exchanges once there
// are any, unless the TLS probes' bound is smaller; and which ("udp" or "tls"); none
// before the first answer.
[[nodiscard]] std::optional<std::pair<protocol::clock_estimate, const char*>> best_clock_estimate(
    const agent_entry& e, std::int64_t use_at_ns);

// One registered worker (io thread only). `key` is unique per session, so a worker that
// registers again under its name is a new worker to the trial queue.
struct worker_entry {
  std::string key;
  protocol::register_worker info;
  std::string address;
  std::shared_ptr<protocol::connection> conn;
  bool alive = true;
  std::uint32_t trials_done = 0;
  // Trials sent to this session and not yet answered, in order: a worker answers them in
  // the order given (a cancelled one too, before the next), so a piece for any other is
  // not an answer.
  std::deque<trial_assignment_plan> given;
  // Pieces of its result so far (split_trial_result), their count and held_bytes; held at
  // most options_.max_trial_result_pieces and max_partial_result_bytes, dropped with the
  // session.
  std::optional<protocol::trial_result> partial;
  std::size_t partial_pieces = 0;
  std::size_t partial_bytes = 0;
  std::size_t partial_string_bytes = 0;  // string_bytes of the pieces so far
};

class controller::impl {
 public:
  explicit impl(controller_options o) : options_(std::move(o)), acceptor_(io_), clock_service_(io_) {}
  // Cancels the runs in flight and waits for them (their threads need the io thread to
  // finish: run_on, their answers), lets their answers drain (final_flush at most), then stops.
  ~impl();

  // ---- listening (controller.cpp) ----

  // Opens the store, binds, and starts the io thread.
  status open();
  asio::awaitable<void> accept_loop();
  // TLS handshake, then the first frame (a hello) says whether an agent or a client speaks.
  // `id`: the connection's entry in unauthenticated_, which the accept loop made.
  asio::awaitable<void> session(std::shared_ptr<protocol::connection> conn, std::uint64_t id);
  // Closes the oldest connections that have not said hello until at most `keep` remain;
  // true when it closed one.
  bool shed_unauthenticated(std::size_t keep);
  // Before a connection from `source` is served: while it would pass max_unauthenticated
  // or max_unauthenticated_per_source, sheds the oldest connection (of that source when
  // its own cap binds) that has sent nothing yet, else the oldest once it has had its
  // grace, else waits (a handshake under way ends or ages).
  asio::awaitable<void> make_room(const asio::ip::address& source);
  // Closes every client once its queue is written, or at final_flush at the latest.
  asio::awaitable<void> close_clients_once_flushed();

  void log(const std::string& line) const;

  // ---- registry (registry.cpp) ----

  asio::awaitable<void> agent_session(std::shared_ptr<protocol::connection> conn, protocol::hello h);
  // The clock probes, which are the heartbeats: a burst at registration, then one per
  // heartbeat_interval.
  asio::awaitable<void> prober(std::shared_ptr<agent_entry> e);
  void on_agent_message(agent_entry& e, const protocol::message& m);
  // Hands an answer to the request waiting for it; false when none waits.
  bool resolve(agent_entry& e, std::uint64_t request, const protocol::message& m);
  std::vector<agent_view> agents();
  // The clock a run maps `entries` through (io thread).
  result<protocol::run_clock> choose_clock(const std::vector<std::shared_ptr<agent_entry>>& entries) const;
  // Sends make(request id) to one agent and waits up to `timeout` for the answer to it.
  asio::awaitable<result<protocol::message>> request(std::string agent,
                                                     std::function<protocol::message(std::uint64_t)> make,
                                                     std::chrono::milliseconds timeout);

  // ---- workers (workers.cpp) ----

  asio::awaitable<void> worker_session(std::shared_ptr<protocol::connection> conn, protocol::register_worker r);
  asio::awaitable<void> worker_heartbeats(std::shared_ptr<worker_entry> w);
  // A piece of a result from `w`; an error drops the worker (why): an answer to a trial it
  // was not given, a result past the caps, or one check_trial_result refuses.
  status on_trial_result(worker_entry& w, protocol::trial_result r);
  // Gives queued trials to idle workers (io thread).
  void dispatch_trials();
  // Hands a finished trial to the run_trial waiting for it (io thread).
  void finish_trial(const trial_finish& f, protocol::trial_result* result, const worker_entry* w);
  [[nodiscard]] worker_view view_of_worker(const worker_entry& w) const;
  [[nodiscard]] bool any_worker_alive() const;
  // A worker session is open (io thread).
  [[nodiscard]] bool any_worker_connected() const;

  // ---- jobs (jobs.cpp) ----

  asio::awaitable<result<jobs_result>> co_run_jobs(std::vector<job_plan> plans, std::chrono::milliseconds timeout,
                                                  std::function<void(const job_outcome&)> on_report);

  // ---- soft NICs on the agents (nic_relay.cpp) ----

  // The fleet's carrier: one soft job per host on the agent of that name (started in this
  // process for hosts without one, see start_in_process_agents). Called on the run's thread.
  // kind soft: each job's transport_config is its host's nic_process_config. kind verbs:
  // the jobs first report their QPs' connection data ("endpoints"), which the carrier
  // hands to their peers ("connect") before they say ready (agents/src/agent/verbs_job.hpp).
  result<std::unique_ptr<traffic::soft_nic::nic_links>> open_agent_links(
      const std::vector<traffic::soft_nic::fleet_host>& hosts, protocol::job_kind kind,
      const std::vector<std::string>& transport_configs, std::int64_t run, std::chrono::milliseconds job_timeout);
  // Agents for `hosts` that are not registered: started through options_.launcher, each
  // putting its NIC into its host's namespace. Returns their names (stopped after the run).
  result<std::vector<std::string>> start_in_process_agents(const std::vector<traffic::soft_nic::fleet_host>& hosts);
  void stop_in_process_agents(const std::vector<std::string>& names);

  // ---- client runs (run_lifecycle.cpp) ----

  asio::awaitable<void> client_session(std::shared_ptr<protocol::connection> conn);
  // A submit_run from a client (io thread): refused while stopping or over the
  // connection's limit; attached to the run of the same submission id when one is in
  // flight; otherwise started.
  void submit(const std::shared_ptr<protocol::connection>& conn, protocol::submit_run s,
              const std::shared_ptr<std::size_t>& runs);
  void start_client_run(const std::shared_ptr<protocol::connection>& conn, protocol::submit_run s,
                        std::shared_ptr<std::size_t> runs);
  // The answer to one submission (its run's thread): the stored outcome for a retry the
  // store already has, else the run.
  protocol::run_finished answer(const protocol::submit_run& s, const std::shared_ptr<submission_state>& state);
  // Joins every client run thread still in client_threads_ (each takes its own out and
  // joins itself through reap_client_run once it has answered).
  void join_client_runs();
  // On the io thread, from the run's last handler: the thread has nothing left but to
  // return, so the join is short.
  void reap_client_run(std::uint64_t id);

  // Members the io thread's coroutines touch as they end come before io_, so they outlive
  // any coroutine frame io_'s destructor may still destroy.
  controller_options options_;
  struct unauthenticated_connection {
    std::weak_ptr<protocol::connection> conn;
    std::chrono::steady_clock::time_point accepted;
    asio::ip::address source;
    bool spoke = false;  // its first bytes came (the TLS handshake began)
  };
  std::map<std::uint64_t, unauthenticated_connection> unauthenticated_;  // by accept order
  std::map<std::uint64_t, std::weak_ptr<protocol::connection>> clients_;
  std::map<std::string, std::shared_ptr<submission_state>> in_flight_;  // by submission id
  std::uint64_t next_connection_ = 0;
  std::atomic<bool> stopping_{false};

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_ = asio::make_work_guard(io_);
  std::unique_ptr<protocol::tls_context> tls_;
  std::shared_ptr<protocol::read_budget> read_budget_ =
      std::make_shared<protocol::read_budget>(options_.max_buffered_bytes);
  tcp::acceptor acceptor_;
  clock_responder clock_service_;
  std::thread thread_;
  std::mutex store_mutex_;
  std::optional<store::run_store> store_;
  std::map<std::string, std::shared_ptr<agent_entry>> agents_;
  std::shared_ptr<const agents::clock::host_clock_monitor> host_clock_;  // options_.host_clock or this host's
  mutable std::mutex run_clocks_mutex_;
  std::map<std::int64_t, protocol::run_clock> run_clocks_;  // by store run id (lab NIC jobs)
  // Workers by name (the newest session of each) and the trials they run.
  std::map<std::string, std::shared_ptr<worker_entry>> workers_;
  trial_queue trials_;
  std::map<std::uint64_t, std::function<void(remote_trial)>> trial_waiters_;
  std::uint64_t worker_sessions_ = 0;
  std::map<std::uint64_t, std::function<void(agent_entry&, const protocol::job_report&)>> job_listeners_;
  std::map<std::uint64_t, std::function<void(const std::string&, const std::string&)>> loss_listeners_;
  std::map<std::uint64_t, std::function<void(agent_entry&, const protocol::nic_event&)>> nic_listeners_;
  // Agents options_.launcher started for hosts that had none, by name.
  std::mutex in_process_mutex_;
  std::set<std::string> in_process_;
  std::uint64_t next_request_ = 0, next_listener_ = 0, next_job_ = 0, sessions_ = 0;
  std::uint64_t rejected_ = 0;
  std::mutex client_threads_mutex_;
  std::map<std::uint64_t, std::thread> client_threads_;  // by client run
  std::uint64_t next_client_run_ = 0;
  controller* owner_ = nullptr;
};

}  // namespace rocelab::controller
