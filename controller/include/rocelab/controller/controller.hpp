#pragma once
// The controller (`rocelab controller`, and embedded in `rocelab run`): listens for agents
// and clients over TLS-PSK (security.hpp), keeps the registry of agents with heartbeats
// and per-agent clock offsets, and runs experiments into the run store.
//
// Registry: an agent registers with hello{name}; the controller probes its clock every
// heartbeat_interval (the probes are the heartbeats) and drops it when nothing has come
// for agent_timeout. A second agent with the same name replaces the first. Agents and
// workers are forgotten once their session ends (agents() and workers() list connected
// ones), so names passing through cost nothing later; a run lists the agents registered at
// its start, and one that left before the run ended is stored `lost` for that run only.
//
// Lifecycle of a run (run_spec): validate the spec (and, for a lab backend, against the
// inventory); store the run `running`; snapshot-and-apply NIC settings on the agents;
// start the jobs on every agent at one instant T0 in the future (each agent gets T0 in
// its own clock through its offset); collect reports as they arrive (each appended to the
// store at once, so an agent that dies later leaves what it sent); restore every setting;
// finish the run completed, partial (an agent was lost: the error names it) or failed.
// backend twin runs in-process (experiments::run_experiment). The hosts of a virtual-lab
// run that have no agent registered get one from `launcher` (agent_launcher.hpp). If this
// process dies, the store marks the run interrupted at its next open and the agents
// restore their settings through their dead-man switch.
//
// Threading: one io_context thread owned by the controller serves every connection;
// run_spec() and run_jobs() block the calling thread (never call them from a handler).
// Clients' submit_run requests each run on a thread of their own, joined as it ends.
//
// Abuse: connections that have not said hello yet (first bytes, TLS handshake or first
// frame pending, at most handshake_timeout from their accept) are capped at
// max_unauthenticated, and at max_unauthenticated_per_source from one peer address. A new
// connection past a cap first sheds the oldest one that has sent nothing for silent_grace
// (an idle TCP connection, not a handshake under way), so idle connections keep no
// authenticating peer out (64 slots / 200 ms: 320 idle connections a second are shed as
// fast as they come, a backlog of 500 in under 2 s). Past a cap with every connection
// mid-handshake, the new one waits (the next ones in the listen backlog) until one of
// those ends or the oldest has had unauthenticated_grace, which is then shed: a crowd of
// agents reconnecting together all get in, and none is shed while no one waits. Their
// first frame may be at most max_hello_bytes. An accept that fails for want of file
// descriptors or kernel memory sheds the oldest of them and otherwise waits (10 ms
// doubling to 1 s) before accepting again.
// A submitted run with a submission id already in flight is attached to that run, not run
// twice; a retry also finds it in the store (protocol/messages.hpp, submit_run).

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rocelab/agents/clock/host_clock_reader.hpp"
#include "rocelab/common/records.hpp"
#include "rocelab/common/result.hpp"
#include "rocelab/controller/agent_launcher.hpp"
#include "rocelab/controller/inventory.hpp"
#include "rocelab/controller/trial_queue.hpp"
#include "rocelab/experiments/lab/local_backends.hpp"
#include "rocelab/experiments/run/runner.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/protocol/messages.hpp"
#include "rocelab/protocol/run_clock.hpp"

namespace rocelab::controller {

struct controller_options {
  std::string listen = "127.0.0.1:0";  // host:port; port 0 picks one (see address())
  std::string db_path = "rocelab.db";  // the run store
  std::string token;                   // read_token_file()
  std::optional<lab_inventory> inventory;
  // A SONiC switch the lab backend reads before T0 to check the run's lossless class
  // (experiments::switch_ready_for_run): its config_db over ssh (sonic_options.host), else
  // a dump in a file, re-read at each run. Neither: a lab run on a SONiC inventory is
  // refused, since nothing else checks the switch.
  std::string switch_ssh;        // "admin@leaf1"
  std::string switch_config_db;  // `sudo sonic-cfggen -d --print-data` output
  std::chrono::milliseconds heartbeat_interval{250};
  // SCHED_FIFO priority of the thread that serves every connection (heartbeats, the agents'
  // reports); 0: the default policy. A controller beside a virtual lab on one machine takes
  // the agents' relay priority: the lab's NICs and switch run SCHED_FIFO, and through an
  // incast a normal thread gets only the kernel's RT-throttling remainder, so late that the
  // agents' dead-man reads timed out and a run lost every host. With SCHED_RESET_ON_FORK:
  // the threads it starts (each client's runs) and what they fork keep the default policy
  // (a capture polling at SCHED_FIFO would hold its CPU from everything below it).
  int io_rt_priority = 0;
  std::chrono::milliseconds agent_timeout{2000};
  std::chrono::milliseconds deadman{5000};       // what agents are told to use (at most)
  std::chrono::milliseconds handshake_timeout{5000};  // from accept to hello: first bytes, TLS, first frame
  std::chrono::milliseconds start_lead{300};     // T0 is this far (plus the worst RTT) ahead
  experiments::virtual_backend_options virtual_options;
  bool log = true;
  std::size_t max_unauthenticated = 64;
  std::size_t max_unauthenticated_per_source = 32;  // from one peer address
  std::chrono::milliseconds unauthenticated_grace{1000};  // before one that spoke may be shed for a newer one
  // One that has sent nothing for this long is idle: the first shed at a cap (a peer about
  // to speak, such as an agent of a crowd whose thread is busy, gets this long).
  std::chrono::milliseconds silent_grace{200};
  std::size_t max_runs_per_client = 8;  // in flight on one client connection; more are refused
  // Bytes of frames being read, across every connection past its TLS handshake, beyond
  // each frame's first 64 KiB (protocol/read_budget.hpp): a body past what is left waits
  // for room within its read deadline, and its connection closes past that. Bodies are
  // held as their bytes arrive, never allocated to their declared size.
  std::size_t max_buffered_bytes = 64u << 20;
  // A worker's result arriving in pieces (done=false) is held at most this many pieces per
  // trial and this many bytes per worker connection (trial_result_check.hpp's held_bytes);
  // past either the worker is dropped and its trial goes to another (trial_queue.hpp).
  std::size_t max_trial_result_pieces = 4096;
  std::size_t max_partial_result_bytes = 256u << 20;
  // Fault injection for tests: called on a submitted run's thread once its outcome is
  // stored, before the answer is sent (a test ends the process here).
  std::function<void(std::int64_t run)> after_run_stored;
  // Starts agents in this process for a virtual-lab run's hosts that have none; empty:
  // such a run fails, naming the hosts without an agent.
  std::shared_ptr<agent_launcher> launcher;
  // This host's clock source: with it synchronised and every agent's host too, runs map
  // the agents through the host clocks (protocol/run_clock.hpp). Empty: this host's, read
  // by host_clock_monitor::of_this_host().
  std::shared_ptr<const agents::clock::host_clock_monitor> host_clock;
};

inline constexpr std::uint32_t max_hello_bytes = 64u << 10;

struct agent_view {
  std::string name;
  std::string address;
  std::vector<std::string> transports;
  bool alive = false;
  double clock_offset_ns = 0;
  double clock_uncertainty_ns = 0;
  std::size_t clock_samples = 0;  // answered probes in the windows, both kinds
  // Which probes the offset comes from: "udp" (the clock service's exchanges, kernel
  // timestamps) or "tls" (the session's probes); empty before the first answer.
  std::string clock_probes;
  std::int64_t registered_ns = 0;  // controller clock
  // What the agent's host reported of its clock with its latest probe answer: "ptp",
  // "ntp", "none", or empty when it reports nothing; its error bound and detail.
  std::string host_clock_source;
  double host_clock_error_bound_ns = 0;
  std::string host_clock_detail;
};

// One agent's part in run_jobs.
struct job_plan {
  std::string agent;
  protocol::start_job job;  // job, run, kind, timeout_ms, host, hosts, messages, transport_config; start_at_ns is set
};

struct job_outcome {
  std::string agent;
  bool reported = false;        // its final report arrived
  bool lost = false;            // the agent was lost before it
  std::string error;
  std::int64_t started_ns = 0;  // controller clock, mapped through the agent's offset
  std::int64_t agent_started_ns = 0;  // the same instant as the agent reported it (its clock)
  double clock_offset_ns = 0;   // the run's offset for this agent (agent - controller)
  std::vector<flow_record> flows;         // times relative to T0, on the controller's timeline
  std::vector<counter_sample> counters;
};

struct jobs_result {
  std::int64_t t0_ns = 0;  // the agreed start instant, controller clock
  std::vector<job_outcome> outcomes;
  protocol::run_clock clock;  // how the agents were mapped (run_clock.hpp)
};

struct run_request {
  std::string source_name;         // for messages ("incast.yaml")
  std::vector<std::string> sets;   // the --set overrides already applied, for the record
  std::function<void(std::uint32_t, std::uint64_t)> on_repeat;
  // Polled while the run goes (twin: every few thousand events; virtual: every 20 ms);
  // true ends it where it is, stored `interrupted` with the records so far. A client's
  // submitted run answers true once that client's connection has closed (Ctrl-C in
  // Python, a killed `rocelab run --controller`), so nobody waits on a run nobody reads.
  std::function<bool()> cancel_requested;
  // The client's submission id (protocol/messages.hpp), stored as the run's parameter
  // submission_parameter so a retry finds the run; empty for none.
  std::string submission;
  // How far a real-time run's workload is (experiments::run_hooks::on_progress).
  std::function<void(const experiments::run_progress&)> on_progress;
};

struct run_outcome {
  std::int64_t run = 0;  // store id
  std::string status;    // completed | partial | interrupted | failed
  std::string error;
  // Non-empty: the run ran, but the store could not keep its records (a full disk): why.
  // The run is `failed` in the store (when it could say so) and `result` holds every
  // record, for the caller to keep elsewhere (rocelab run's records.db).
  std::string store_error;
  experiments::experiment_result result;
  std::vector<agent_view> agents;
};

// A registered worker (`rocelab worker`, controller/worker.hpp).
struct worker_view {
  std::string name;
  std::string host;
  std::string address;
  std::string slurm_job_id;         // empty outside Slurm
  std::string slurm_array_task_id;
  std::string slurm_node;
  bool alive = false;
  bool busy = false;                // running a trial
  std::uint32_t trials_done = 0;
};

// A trial run by a worker (run_trial). completed false: no worker's result counted (lost
// too often, or cancelled); error says why. completed true with an error: the worker ran
// it and it failed there (an invalid spec, a failed run).
struct remote_trial {
  bool completed = false;
  std::string error;
  std::uint32_t attempts = 0;
  std::vector<protocol::trial_repeat> repeats;
  worker_view worker;  // the worker whose result counted
};

// Where a trial ran, as run parameters: worker.name, worker.host, worker.attempts, and
// worker.slurm_job ("41_0") with worker.node on Slurm (worker.node: the host elsewhere).
[[nodiscard]] std::map<std::string, std::string> placement_parameters(const remote_trial& t);

class controller {
 public:
  // Opens the store (marking runs of dead controllers interrupted), binds, and starts the
  // io thread. Errors: the store, the address, the token.
  [[nodiscard]] static result<std::unique_ptr<controller>> start(controller_options options);
  ~controller();  // stops the io thread, closes every connection
  controller(const controller&) = delete;
  controller& operator=(const controller&) = delete;

  [[nodiscard]] std::string address() const;  // "127.0.0.1:43117"
  [[nodiscard]] std::uint16_t port() const;
  // The UDP clock service's port (clock_responder.hpp; usually port()'s number); 0 when it
  // could not be opened.
  [[nodiscard]] std::uint16_t clock_port() const;

  [[nodiscard]] std::vector<agent_view> agents() const;
  // Waits until every named agent is registered with at least `min_clock_samples` probes.
  [[nodiscard]] bool wait_for_agents(const std::vector<std::string>& names, std::chrono::milliseconds timeout,
                                     std::size_t min_clock_samples = 4) const;
  // Waits until `count` agents are registered and alive.
  [[nodiscard]] bool wait_for_agent_count(std::size_t count, std::chrono::milliseconds timeout) const;

  // Sends apply_settings to an agent and waits for its answer (the snapshot).
  [[nodiscard]] result<std::vector<protocol::setting>> apply_settings(const std::string& agent,
                                                                      const std::string& driver,
                                                                      const std::vector<protocol::setting>& settings,
                                                            std::chrono::milliseconds timeout);
  [[nodiscard]] result<std::uint32_t> restore_settings(const std::string& agent, std::chrono::milliseconds timeout);

  // Starts every plan's job at one instant and collects the reports until each agent's
  // final report arrived, it was lost, or `timeout` passed (then stop_job is sent and the
  // lost/late ones are marked lost). `on_report` sees each report as it arrives (on the io
  // thread; keep it short), e.g. to append it to the store.
  // The clock a run's agents were mapped through when its jobs started (the lab backend's
  // NIC jobs); none before that.
  [[nodiscard]] std::optional<protocol::run_clock> clock_of_run(std::int64_t run) const;

  [[nodiscard]] result<jobs_result> run_jobs(std::vector<job_plan> plans, std::chrono::milliseconds timeout,
                                             const std::function<void(const job_outcome&)>& on_report = {});

  // Runs a validated spec through the lifecycle above and stores it. A twin spec goes to
  // a registered worker when one is alive (a sweep's executor attached its workers here)
  // and its placement is stored with the run; without workers it runs in this process.
  [[nodiscard]] result<run_outcome> run_spec(const experiments::experiment_spec& spec, const run_request& request);

  // ---- workers (sweep trials; trial_queue.hpp holds the rules) ----

  [[nodiscard]] std::vector<worker_view> workers() const;
  // Waits until `count` workers are registered and alive; false at the timeout or as soon
  // as `give_up` answers true.
  [[nodiscard]] bool wait_for_workers(std::size_t count, std::chrono::milliseconds timeout,
                                      const std::function<bool()>& give_up = {}) const;
  // Queues a trial (a resolved spec with its files inlined) for the workers and blocks
  // until a worker's result counts or the trial fails. `cancel_requested` is polled every
  // 50 ms; true ends the trial (completed false, error "cancelled: ..."). Safe from many
  // threads at once (one per trial in flight).
  [[nodiscard]] remote_trial run_trial(trial_work work, const std::function<bool()>& cancel_requested = {});

  // Cancels every run in flight (each ends stored `interrupted` with its records so far)
  // and refuses further submissions; returns at once. Safe from any thread (a signal
  // watcher); the destructor then waits for the runs to end.
  void cancel_runs() noexcept;

  // Bytes held now for frames being read (every connection, free allowances included).
  [[nodiscard]] std::size_t buffered_bytes() const noexcept;

  // The store file; callers open their own read-only handle to read it.
  [[nodiscard]] const std::string& db_path() const noexcept;

  class impl;

 private:
  [[nodiscard]] result<experiments::experiment_result> run_on_worker(const experiments::experiment_spec& spec,
                                                                     std::int64_t run,
                                                                     const std::function<bool()>& cancel_requested);
  explicit controller(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

}  // namespace rocelab::controller
