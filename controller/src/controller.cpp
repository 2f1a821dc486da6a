#include "rocelab/controller/controller.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <atomic>
#include <future>
#include <iostream>
#include <map>
#include <mutex>
#include <thread>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "agent_nic_links.hpp"
#include "rocelab/agents/agent/agent.hpp"
#include "rocelab/controller/clock_offset.hpp"
#include "rocelab/controller/connection.hpp"
#include "rocelab/controller/security.hpp"
#include "rocelab/controller/stored_outcome.hpp"
#include "rocelab/controller/timebase.hpp"
#include "rocelab/experiments/spec/spec_files.hpp"
#include "rocelab/experiments/tuning/exports.hpp"
#include "rocelab/experiments/spec/build.hpp"
#include "rocelab/experiments/run/summary.hpp"
#include "rocelab/store/run_store.hpp"
#include "rocelab/traffic/soft_nic/nic_fleet.hpp"

namespace rocelab::controller {

using asio::use_awaitable;
using tcp = asio::ip::tcp;

namespace {

constexpr auto nothrow = asio::as_tuple(use_awaitable);
constexpr std::size_t probe_burst = 8;
constexpr std::chrono::milliseconds probe_burst_gap{20};
constexpr std::chrono::milliseconds accept_backoff_first{10};
constexpr std::chrono::milliseconds accept_backoff_max{1000};
// How long a stopping controller lets its last answers drain, at most, before it closes the clients.
constexpr std::chrono::milliseconds final_flush{50};

// An accept that failed for want of descriptors or kernel memory: waiting, not retrying at
// once, is what keeps a full table from costing a core.
bool out_of_resources(const boost::system::error_code& ec) {
  return ec == asio::error::no_descriptors || ec == boost::system::errc::too_many_files_open_in_system ||
         ec == asio::error::no_buffer_space || ec == asio::error::no_memory;
}

// The connections waiting on one submitted run (several when a client retried while it
// ran). Added to on the io thread; read by the run's thread through any_open().
struct submission_state {
  std::mutex mutex;
  std::vector<std::pair<std::shared_ptr<connection>, std::uint64_t>> waiters;  // connection, its request id

  void attach(std::shared_ptr<connection> conn, std::uint64_t request) {
    std::lock_guard lock(mutex);
    waiters.emplace_back(std::move(conn), request);
  }
  [[nodiscard]] bool any_open() {
    std::lock_guard lock(mutex);
    return std::any_of(waiters.begin(), waiters.end(), [](const auto& w) { return w.first->is_open(); });
  }
  [[nodiscard]] std::vector<std::pair<std::shared_ptr<connection>, std::uint64_t>> take() {
    std::lock_guard lock(mutex);
    return std::move(waiters);
  }
};

struct agent_entry {
  std::string name;
  std::string address;
  std::vector<std::string> transports;
  std::shared_ptr<connection> conn;
  clock_offset_estimator clock{16};
  std::int64_t registered_ns = 0;
  std::int64_t last_heard_ns = 0;
  bool alive = true;
  std::uint64_t probe_seq = 0;
  // Requests waiting for an answer (settings), by request id.
  std::map<std::uint64_t, std::function<void(result<message>)>> pending;
};

agent_view view_of(const agent_entry& e) {
  agent_view v;
  v.name = e.name;
  v.address = e.address;
  v.transports = e.transports;
  v.alive = e.alive;
  v.registered_ns = e.registered_ns;
  if (auto est = e.clock.estimate()) {
    v.clock_offset_ns = est->offset_ns;
    v.clock_uncertainty_ns = est->uncertainty_ns;
    v.clock_samples = est->samples;
  }
  return v;
}

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

}  // namespace

class controller::impl {
 public:
  explicit impl(controller_options o) : options_(std::move(o)), acceptor_(io_) {}

  // Members the io thread's coroutines touch as they end come before io_, so they outlive
  // any coroutine frame io_'s destructor may still destroy.
  controller_options options_;
  std::map<std::uint64_t, std::weak_ptr<connection>> unauthenticated_;  // by accept order
  std::map<std::uint64_t, std::weak_ptr<connection>> clients_;
  std::map<std::string, std::shared_ptr<submission_state>> in_flight_;  // by submission id
  std::uint64_t next_connection_ = 0;
  std::atomic<bool> stopping_{false};

  status open() {
    auto tls = tls_context::make(tls_role::server, options_.token);
    if (!tls) return tls.error();
    tls_ = std::move(*tls);
    auto store = store::run_store::open(options_.db_path);
    if (!store) return store.error().with_context("controller store");
    store_.emplace(std::move(*store));
    auto parts = split_address(options_.listen);
    if (!parts) return parts.error();
    boost::system::error_code ec;
    const auto addr = asio::ip::make_address(parts->first, ec);
    if (ec) return status(error_code::invalid_argument, "listen address " + parts->first + ": " + ec.message());
    const tcp::endpoint ep(addr, static_cast<std::uint16_t>(std::stoul(parts->second)));
    acceptor_.open(ep.protocol(), ec);
    if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor_.bind(ep, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return status(error_code::io_error, "listening on " + options_.listen + ": " + ec.message(), ec.value());
    asio::co_spawn(io_, accept_loop(), asio::detached);
    thread_ = std::thread([this] { io_.run(); });
    return status::success();
  }

  // Cancels the runs in flight and waits for them (their threads need the io thread to
  // finish: run_on, their answers), lets their answers drain (final_flush at most), then stops.
  ~impl() {
    stopping_ = true;
    asio::post(io_, [this] {
      boost::system::error_code ec;
      acceptor_.close(ec);
    });
    join_client_runs();
    asio::post(io_, [this] {
      for (auto& [n, e] : agents_)
        if (e->conn) e->conn->close();
      for (auto& [id, u] : unauthenticated_)
        if (auto c = u.lock()) c->close();
      asio::co_spawn(io_, close_clients_once_flushed(), asio::detached);
      work_.reset();
    });
    if (thread_.joinable()) thread_.join();
    {
      std::lock_guard lock(embedded_mutex_);
      for (auto& [n, a] : embedded_) a->stop();
      embedded_.clear();
      agents_work_.reset();
    }
    if (agents_thread_.joinable()) agents_thread_.join();
    join_client_runs();
  }

  // Closes every client once its queue is written, or at final_flush at the latest.
  asio::awaitable<void> close_clients_once_flushed() {
    asio::steady_timer tick(io_);
    const auto until = std::chrono::steady_clock::now() + final_flush;
    const auto pending = [this] {
      return std::any_of(clients_.begin(), clients_.end(), [](const auto& c) {
        auto s = c.second.lock();
        return s && s->is_open() && s->queued_frames() > 0;
      });
    };
    while (pending() && std::chrono::steady_clock::now() < until) {
      tick.expires_after(std::chrono::milliseconds(2));
      co_await tick.async_wait(nothrow);
    }
    for (auto& [id, c] : clients_)
      if (auto s = c.lock()) s->close();
  }

  // Joins every client run thread still in client_threads_ (each takes its own out and
  // joins itself through reap_client_run once it has answered).
  void join_client_runs() {
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

  // On the io thread, from the run's last handler: the thread has nothing left but to
  // return, so the join is short.
  void reap_client_run(std::uint64_t id) {
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

  // Closes the oldest connections that have not said hello until at most `keep` remain;
  // true when it closed one.
  bool shed_unauthenticated(std::size_t keep) {
    bool shed = false;
    while (unauthenticated_.size() > keep) {
      auto oldest = unauthenticated_.begin();
      if (auto c = oldest->second.lock()) {
        log("shedding " + c->peer() + ": it has not authenticated and " + std::to_string(unauthenticated_.size()) +
            " connections are waiting to (limit " + std::to_string(options_.max_unauthenticated) + ")");
        c->close();
        shed = true;
      }
      unauthenticated_.erase(oldest);
    }
    return shed;
  }

  void log(const std::string& line) const {
    if (options_.log) std::cerr << "rocelab controller: " << line << "\n";
  }

  // ---- connections ----

  asio::awaitable<void> accept_loop() {
    asio::steady_timer pause(io_);
    std::chrono::milliseconds backoff{0};
    while (acceptor_.is_open()) {
      auto [ec, socket] = co_await acceptor_.async_accept(nothrow);
      if (ec) {
        if (ec == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
        if (ec == asio::error::connection_aborted) continue;  // that peer gave up; the next is fine
        // Out of descriptors: the oldest unauthenticated connection makes room; without
        // one (or on any other error) wait before trying again.
        if (out_of_resources(ec) && shed_unauthenticated(unauthenticated_.empty() ? 0 : unauthenticated_.size() - 1))
          continue;
        backoff = backoff.count() == 0 ? accept_backoff_first : std::min(2 * backoff, accept_backoff_max);
        if (backoff == accept_backoff_first || backoff == accept_backoff_max)
          log("accepting: " + ec.message() + "; trying again in " + std::to_string(backoff.count()) + " ms");
        pause.expires_after(backoff);
        co_await pause.async_wait(nothrow);
        continue;
      }
      backoff = std::chrono::milliseconds{0};
      boost::system::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      auto conn = std::make_shared<connection>(connection::tls_stream(std::move(socket), tls_->native()));
      asio::co_spawn(io_, session(conn), asio::detached);
    }
  }

  asio::awaitable<void> session(std::shared_ptr<connection> conn) {
    // Counted unauthenticated until its hello arrived (or it ended).
    class unauthenticated_entry {
     public:
      unauthenticated_entry(impl& self, std::uint64_t id) : self_(self), id_(id) {}
      ~unauthenticated_entry() { self_.unauthenticated_.erase(id_); }
      unauthenticated_entry(const unauthenticated_entry&) = delete;
      unauthenticated_entry& operator=(const unauthenticated_entry&) = delete;

     private:
      impl& self_;
      std::uint64_t id_;
    };
    const std::uint64_t id = ++next_connection_;
    unauthenticated_.emplace(id, conn);
    std::optional<unauthenticated_entry> pending;
    pending.emplace(*this, id);
    (void)shed_unauthenticated(options_.max_unauthenticated);
    // Nothing is read or written in the clear: until the handshake proved the token, the
    // peer sees only TLS alerts.
    if (auto st = co_await conn->handshake(asio::ssl::stream_base::server, options_.handshake_timeout); !st.ok()) {
      ++rejected_;
      log("rejected " + conn->peer() + ": " + st.message());
      co_return;
    }
    conn->start_writer();
    auto first = co_await conn->read(options_.handshake_timeout, max_hello_bytes);
    pending.reset();
    if (!first) {
      log("closed " + conn->peer() + ": " + first.error().message());
      co_return;
    }
    auto* h = std::get_if<hello>(&*first);
    if (!h) {
      conn->send(error_message{0, "invalid argument", std::string("expected hello, got ") + to_string(type_of(*first))});
      conn->close();
      co_return;
    }
    if (h->role == peer_role::client) {
      co_await client_session(conn);
      co_return;
    }
    co_await agent_session(conn, std::move(*h));
  }

  asio::awaitable<void> agent_session(std::shared_ptr<connection> conn, hello h) {
    auto e = std::make_shared<agent_entry>();
    e->name = h.name;
    e->address = conn->peer();
    e->transports = h.transports;
    e->conn = conn;
    e->registered_ns = e->last_heard_ns = monotonic_ns();
    if (auto it = agents_.find(h.name); it != agents_.end() && it->second->alive) {
      log("agent " + h.name + " registered again from " + conn->peer() + "; closing the old session");
      it->second->conn->close();
    }
    agents_[h.name] = e;
    const std::string session_id = h.name + "-" + std::to_string(++sessions_);
    conn->send(welcome{session_id, options_.heartbeat_interval.count(), options_.deadman.count()});
    log("agent " + h.name + " registered from " + conn->peer());
    asio::co_spawn(io_, prober(e), asio::detached);

    std::string why = "closed";
    while (conn->is_open()) {
      auto m = co_await conn->read(options_.agent_timeout);
      if (!m) {
        why = m.error().message();
        break;
      }
      e->last_heard_ns = monotonic_ns();
      on_agent_message(*e, *m);
    }
    conn->close();
    e->alive = false;
    for (auto& [id, done] : e->pending) done(status(error_code::cancelled, "agent " + e->name + " lost: " + why));
    e->pending.clear();
    if (agents_.contains(e->name) && agents_[e->name] == e) {
      log("agent " + e->name + " lost: " + why);
      for (auto& [id, l] : loss_listeners_) l(e->name, why);
    }
  }

  asio::awaitable<void> prober(std::shared_ptr<agent_entry> e) {
    asio::steady_timer t(io_);
    for (std::size_t n = 0; e->alive && e->conn->is_open(); ++n) {
      e->conn->send(clock_probe{++e->probe_seq, monotonic_ns()});
      t.expires_after(n < probe_burst ? std::chrono::duration_cast<std::chrono::nanoseconds>(probe_burst_gap)
                                      : std::chrono::duration_cast<std::chrono::nanoseconds>(options_.heartbeat_interval));
      co_await t.async_wait(nothrow);
    }
  }

  void on_agent_message(agent_entry& e, const message& m) {
    if (auto* r = std::get_if<clock_reply>(&m)) {
      // t4 is taken here, before any other work on the reply.
      (void)e.clock.add(r->t1_ns, r->t2_ns, r->t3_ns, monotonic_ns());
    } else if (std::holds_alternative<heartbeat>(m)) {
    } else if (auto* a = std::get_if<settings_applied>(&m)) {
      resolve(e, a->request, m);
    } else if (auto* s = std::get_if<settings_restored>(&m)) {
      resolve(e, s->request, m);
    } else if (auto* err = std::get_if<error_message>(&m)) {
      if (!resolve(e, err->request, m)) log("agent " + e.name + ": " + err->message);
    } else if (auto* n = std::get_if<nic_event>(&m)) {
      if (auto it = nic_listeners_.find(n->job); it != nic_listeners_.end()) it->second(e, *n);
    } else if (auto* j = std::get_if<job_report>(&m)) {
      if (auto it = job_listeners_.find(j->job); it != job_listeners_.end())
        it->second(e, *j);
      else
        log("agent " + e.name + ": report for unknown job " + std::to_string(j->job));
    } else {
      e.conn->send(error_message{0, "invalid argument",
                                 std::string("controller does not take ") + to_string(type_of(m)) + " from agents"});
    }
  }

  bool resolve(agent_entry& e, std::uint64_t request, const message& m) {
    auto it = e.pending.find(request);
    if (it == e.pending.end()) return false;
    auto done = std::move(it->second);
    e.pending.erase(it);
    done(m);
    return true;
  }

  asio::awaitable<void> client_session(std::shared_ptr<connection> conn) {
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

  // A submit_run from a client (io thread): refused while stopping or over the
  // connection's limit; attached to the run of the same submission id when one is in
  // flight; otherwise started.
  void submit(const std::shared_ptr<connection>& conn, submit_run s, const std::shared_ptr<std::size_t>& runs) {
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

  void start_client_run(const std::shared_ptr<connection>& conn, submit_run s, std::shared_ptr<std::size_t> runs);
  // The answer to one submission (its run's thread): the stored outcome for a retry the
  // store already has, else the run.
  run_finished answer(const submit_run& s, const std::shared_ptr<submission_state>& state);

  // ---- queries ----

  std::vector<agent_view> agents() {
    return run_on<std::vector<agent_view>>(io_, [this]() -> asio::awaitable<std::vector<agent_view>> {
      std::vector<agent_view> out;
      for (const auto& [n, e] : agents_) out.push_back(view_of(*e));
      co_return out;
    });
  }

  // ---- requests to one agent ----

  asio::awaitable<result<message>> request(std::string agent, std::function<message(std::uint64_t)> make,
                                           std::chrono::milliseconds timeout) {
    auto it = agents_.find(agent);
    if (it == agents_.end() || !it->second->alive)
      co_return status(error_code::not_found, "agent " + agent + " is not registered");
    auto e = it->second;
    const std::uint64_t id = ++next_request_;
    auto answer = std::make_shared<std::optional<result<message>>>();
    auto wake = std::make_shared<asio::steady_timer>(io_, timeout);
    e->pending[id] = [answer, wake](result<message> r) {
      *answer = std::move(r);
      wake->cancel();
    };
    e->conn->send(make(id));
    co_await wake->async_wait(nothrow);
    if (!*answer) {
      e->pending.erase(id);
      co_return status(error_code::cancelled, "agent " + agent + ": no answer within " + std::to_string(timeout.count()) + " ms");
    }
    co_return std::move(**answer);
  }

  // ---- jobs ----

  asio::awaitable<result<jobs_result>> co_run_jobs(std::vector<job_plan> plans, std::chrono::milliseconds timeout,
                                                  std::function<void(const job_outcome&)> on_report);

  // ---- soft NICs on the agents (virtual backend) ----

  // The fleet's carrier: one soft job per host on the agent of that name (started in the
  // controller for hosts without one, see lab_agents). Called on the run's thread.
  // kind soft: each job's transport_config is its host's nic_process_config. kind verbs:
  // the jobs first report their QPs' connection data ("endpoints"), which the carrier
  // hands to their peers ("connect") before they say ready (agents/src/agent/verbs_job.hpp).
  result<std::unique_ptr<traffic::soft_nic::nic_links>> open_agent_links(
      const std::vector<traffic::soft_nic::fleet_host>& hosts, job_kind kind,
      const std::vector<std::string>& transport_configs, std::int64_t run, std::chrono::milliseconds job_timeout);
  // Agents for `hosts` that are not registered: started here, on agents_io_, each putting
  // its NIC into its host's namespace. Returns their names (stopped after the run).
  result<std::vector<std::string>> start_embedded_agents(const std::vector<traffic::soft_nic::fleet_host>& hosts);
  void stop_embedded_agents(const std::vector<std::string>& names);

  // backend lab: the spec's workload on the inventory's hosts, each host's traffic a verbs
  // job on its agent (RC WRITE on its RDMA NIC), the NICs' DCQCN knobs applied through the
  // agents first and restored after (lab_run.cpp).
  result<experiments::experiment_result> run_lab(const experiments::experiment_spec& spec, const run_request& request,
                                                 std::int64_t run);

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_ = asio::make_work_guard(io_);
  std::unique_ptr<tls_context> tls_;
  tcp::acceptor acceptor_;
  std::thread thread_;
  std::mutex store_mutex_;
  std::optional<store::run_store> store_;
  std::map<std::string, std::shared_ptr<agent_entry>> agents_;
  std::map<std::uint64_t, std::function<void(agent_entry&, const job_report&)>> job_listeners_;
  std::map<std::uint64_t, std::function<void(const std::string&, const std::string&)>> loss_listeners_;
  std::map<std::uint64_t, std::function<void(agent_entry&, const nic_event&)>> nic_listeners_;
  // Agents the controller runs itself for lab hosts that have none (embedded runs).
  std::mutex embedded_mutex_;
  std::unique_ptr<asio::io_context> agents_io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> agents_work_;
  std::thread agents_thread_;
  std::map<std::string, std::shared_ptr<agents::agent::agent>> embedded_;
  std::uint64_t next_request_ = 0, next_listener_ = 0, next_job_ = 0, sessions_ = 0;
  std::uint64_t rejected_ = 0;
  std::mutex client_threads_mutex_;
  std::map<std::uint64_t, std::thread> client_threads_;  // by client run
  std::uint64_t next_client_run_ = 0;
  controller* owner_ = nullptr;
};

asio::awaitable<result<jobs_result>> controller::impl::co_run_jobs(std::vector<job_plan> plans,
                                                                  std::chrono::milliseconds timeout,
                                                                  std::function<void(const job_outcome&)> on_report) {
  struct state {
    std::vector<job_outcome> outcomes;
    std::map<std::string, std::size_t> by_agent;
    std::size_t remaining = 0;
    std::int64_t t0 = 0;
  };
  auto st = std::make_shared<state>();
  auto wake = std::make_shared<asio::steady_timer>(io_);
  std::vector<std::shared_ptr<agent_entry>> entries;
  double worst_rtt_ns = 0;
  for (const auto& p : plans) {
    auto it = agents_.find(p.agent);
    if (it == agents_.end() || !it->second->alive)
      co_return status(error_code::not_found, "agent " + p.agent + " is not registered");
    auto est = it->second->clock.estimate();
    if (!est) co_return status(error_code::unavailable, "agent " + p.agent + ": no clock estimate yet");
    worst_rtt_ns = std::max(worst_rtt_ns, 2 * est->uncertainty_ns);
    entries.push_back(it->second);
    st->by_agent[p.agent] = st->outcomes.size();
    job_outcome o;
    o.agent = p.agent;
    st->outcomes.push_back(std::move(o));
  }
  st->remaining = plans.size();
  // One instant for everyone, far enough ahead that the slowest start_job arrives first.
  st->t0 = monotonic_ns() + std::chrono::nanoseconds(options_.start_lead).count() + 4 * static_cast<std::int64_t>(worst_rtt_ns);

  const std::uint64_t listener = ++next_listener_;
  loss_listeners_[listener] = [st, wake](const std::string& agent, const std::string& why) {
    auto it = st->by_agent.find(agent);
    if (it == st->by_agent.end()) return;
    auto& o = st->outcomes[it->second];
    if (o.reported || o.lost) return;
    o.lost = true;
    o.error = "agent " + agent + " lost: " + why;
    --st->remaining;
    wake->cancel();
  };
  std::vector<std::uint64_t> job_ids;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    auto& p = plans[i];
    const std::uint64_t id = ++next_job_;
    job_ids.push_back(id);
    p.job.job = id;
    p.job.start_at_ns = entries[i]->clock.to_agent(st->t0);
    job_listeners_[id] = [st, wake, i, on_report](agent_entry& e, const job_report& r) {
      auto& o = st->outcomes[i];
      if (o.reported || o.lost) return;
      job_outcome delta;
      delta.agent = o.agent;
      if (r.started_ns != 0) o.started_ns = e.clock.to_controller(r.started_ns);
      delta.started_ns = o.started_ns;
      for (flow_record f : r.flows) {
        f.start_ns = e.clock.to_controller(f.start_ns) - st->t0;
        if (f.end_ns >= 0) f.end_ns = e.clock.to_controller(f.end_ns) - st->t0;
        delta.flows.push_back(f);
      }
      for (counter_sample c : r.counters) {
        c.t_ns = e.clock.to_controller(c.t_ns) - st->t0;
        delta.counters.push_back(c);
      }
      if (!r.error.empty()) o.error = r.error;
      delta.error = o.error;
      if (r.done) {
        o.reported = true;
        delta.reported = true;
        --st->remaining;
        wake->cancel();
      }
      o.flows.insert(o.flows.end(), delta.flows.begin(), delta.flows.end());
      o.counters.insert(o.counters.end(), delta.counters.begin(), delta.counters.end());
      if (on_report) on_report(delta);
    };
    entries[i]->conn->send(p.job);
  }

  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (st->remaining > 0 && std::chrono::steady_clock::now() < deadline) {
    wake->expires_at(deadline);
    co_await wake->async_wait(nothrow);
  }
  if (st->remaining > 0) {
    // Ask the late ones to stop and report what they have; give them a moment.
    for (std::size_t i = 0; i < plans.size(); ++i)
      if (!st->outcomes[i].reported && !st->outcomes[i].lost && entries[i]->alive)
        entries[i]->conn->send(stop_job{job_ids[i]});
    const auto grace = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (st->remaining > 0 && std::chrono::steady_clock::now() < grace) {
      wake->expires_at(grace);
      co_await wake->async_wait(nothrow);
    }
    for (auto& o : st->outcomes)
      if (!o.reported && !o.lost) {
        o.lost = true;
        o.error = "agent " + o.agent + ": no final report within " + std::to_string(timeout.count()) + " ms";
      }
  }
  loss_listeners_.erase(listener);
  for (auto id : job_ids) job_listeners_.erase(id);
  co_return jobs_result{st->t0, std::move(st->outcomes)};
}

result<std::vector<std::string>> controller::impl::start_embedded_agents(
    const std::vector<traffic::soft_nic::fleet_host>& hosts) {
  std::vector<std::string> missing;
  const auto registered = agents();
  for (const auto& h : hosts) {
    bool usable = false;
    for (const auto& a : registered)
      if (a.name == h.name && a.alive &&
          std::find(a.transports.begin(), a.transports.end(), "soft") != a.transports.end())
        usable = true;
    if (!usable) missing.push_back(h.name);
  }
  if (missing.empty()) return missing;
  boost::system::error_code ec;
  auto ep = acceptor_.local_endpoint(ec);
  if (ec) return status(error_code::unavailable, "embedded agents: the controller is not listening");
  // Agents reach a controller listening on every address through loopback.
  const std::string host = ep.address().is_unspecified() ? "127.0.0.1" : ep.address().to_string();
  std::lock_guard lock(embedded_mutex_);
  if (!agents_io_) {
    agents_io_ = std::make_unique<asio::io_context>();
    agents_work_.emplace(asio::make_work_guard(*agents_io_));
    agents_thread_ = std::thread([io = agents_io_.get()] { io->run(); });
  }
  for (const auto& h : hosts) {
    if (std::find(missing.begin(), missing.end(), h.name) == missing.end()) continue;
    agents::agent::agent_options o;
    o.controller = host + ":" + std::to_string(ep.port());
    o.name = h.name;
    o.token = options_.token;
    o.netns = h.netns;
    o.rocelab_binary = options_.virtual_options.rocelab_binary;
    o.log_dir = options_.virtual_options.log_dir;
    o.log = options_.log;
    auto a = agents::agent::agent::make(o);
    if (!a) return a.error().with_context("embedded agent " + h.name);
    (*a)->start(agents_io_->get_executor());
    embedded_[h.name] = *a;
  }
  log("no agent registered for " + std::to_string(missing.size()) + " of the run's hosts; started them in the controller");
  return missing;
}

void controller::impl::stop_embedded_agents(const std::vector<std::string>& names) {
  std::lock_guard lock(embedded_mutex_);
  for (const auto& n : names)
    if (auto it = embedded_.find(n); it != embedded_.end()) {
      it->second->stop();
      embedded_.erase(it);
    }
}

result<std::unique_ptr<traffic::soft_nic::nic_links>> controller::impl::open_agent_links(
    const std::vector<traffic::soft_nic::fleet_host>& hosts, job_kind kind,
    const std::vector<std::string>& transport_configs, std::int64_t run, std::chrono::milliseconds job_timeout) {
  namespace nic = traffic::soft_nic;
  // Hosts of the virtual lab without an agent get one here; a real lab's must have theirs.
  auto embedded = kind == job_kind::soft ? start_embedded_agents(hosts) : result<std::vector<std::string>>(std::vector<std::string>{});
  if (!embedded) return embedded.error();
  std::vector<std::string> names;
  for (const auto& h : hosts) names.push_back(h.name);
  if (!owner_->wait_for_agents(names, std::chrono::seconds(10))) {
    stop_embedded_agents(*embedded);
    return status(error_code::unavailable, "the agents of the run's hosts did not register within 10 s");
  }
  auto relay = std::make_shared<agent_nic_relay>(hosts.size());
  // verbs: each host's QPs' connection data by peer, until every host has sent its own.
  struct exchange {
    std::vector<nlohmann::json> connections;
    std::size_t have = 0;
    std::vector<std::shared_ptr<agent_entry>> entries;
    std::vector<std::uint64_t> jobs;
  };
  auto ex = std::make_shared<exchange>();
  ex->connections.resize(hosts.size());
  struct started {
    std::vector<std::shared_ptr<agent_entry>> entries;
    std::vector<std::uint64_t> jobs;
    std::uint64_t listener = 0;
  };
  auto st = run_on<result<started>>(io_, [&]() -> asio::awaitable<result<started>> {
    started out;
    std::map<std::string, std::uint32_t> host_of;
    for (std::uint32_t i = 0; i < hosts.size(); ++i) {
      auto it = agents_.find(hosts[i].name);
      if (it == agents_.end() || !it->second->alive)
        co_return status(error_code::not_found, "agent " + hosts[i].name + " is not registered");
      out.entries.push_back(it->second);
      host_of[hosts[i].name] = i;
    }
    out.listener = ++next_listener_;
    loss_listeners_[out.listener] = [relay, host_of](const std::string& agent, const std::string& why) {
      if (auto it = host_of.find(agent); it != host_of.end()) relay->end(it->second, "agent " + agent + " lost: " + why);
    };
    for (std::uint32_t i = 0; i < hosts.size(); ++i) {
      const std::uint64_t id = ++next_job_;
      out.jobs.push_back(id);
      start_job j;
      j.job = id;
      j.run = run;
      j.kind = kind;
      j.start_at_ns = out.entries[i]->clock.to_agent(monotonic_ns());
      j.host = i;
      j.timeout_ms = job_timeout.count();
      for (const auto& h : hosts) j.hosts.push_back(h.name);
      j.transport_config = transport_configs[i];
      job_listeners_[id] = [relay, i](agent_entry& e, const job_report& r) {
        if (r.done) relay->end(i, r.error.empty() ? "" : "agent " + e.name + ": " + r.error);
      };
      // The NIC's times are in the agent's clock; the fleet's are the controller's.
      nic_listeners_[id] = [relay, i, ex](agent_entry& e, const nic_event& ev) {
        for (const auto& line : ev.lines) {
          auto j = nlohmann::json::parse(line, nullptr, false);
          if (!j.is_object()) continue;
          if (j.value("ev", "") == "endpoints") {
            if (!ex->connections[i].is_null()) continue;
            ex->connections[i] = j.value("connections", nlohmann::json::object());
            if (++ex->have < ex->connections.size()) continue;
            // Everyone's ends are known: each host gets, per peer, that peer's QP toward it.
            for (std::size_t h = 0; h < ex->connections.size(); ++h) {
              nlohmann::json peers = nlohmann::json::object();
              for (std::size_t p = 0; p < ex->connections.size(); ++p)
                if (p != h) peers[std::to_string(p)] = ex->connections[p].value(std::to_string(h), nlohmann::json());
              ex->entries[h]->conn->send(nic_command{ex->jobs[h], {nlohmann::json{{"op", "connect"}, {"peers", peers}}.dump()}});
            }
            continue;
          }
          for (const char* k : {"t_ns", "start_ns", "end_ns"})
            if (auto f = j.find(k); f != j.end() && f->is_number_integer())
              *f = e.clock.to_controller(f->get<std::int64_t>());
          relay->push(i, j.dump());
        }
      };
      out.entries[i]->conn->send(j);
    }
    ex->entries = out.entries;
    ex->jobs = out.jobs;
    co_return out;
  });
  if (!st) {
    stop_embedded_agents(*embedded);
    return st.error();
  }
  auto entries = st->entries;
  auto jobs = st->jobs;
  auto send_line = [this, entries, jobs](std::uint32_t h, std::string line) {
    asio::post(io_, [e = entries[h], id = jobs[h], line = std::move(line)] {
      if (e->alive) e->conn->send(nic_command{id, {line}});
    });
  };
  auto stop_job_fn = [this, entries, jobs](std::uint32_t h) {
    asio::post(io_, [e = entries[h], id = jobs[h]] {
      if (e->alive) e->conn->send(stop_job{id});
    });
  };
  auto release = [this, jobs, listener = st->listener, embedded = *embedded] {
    run_on<bool>(io_, [&]() -> asio::awaitable<bool> {
      loss_listeners_.erase(listener);
      for (auto id : jobs) {
        job_listeners_.erase(id);
        nic_listeners_.erase(id);
      }
      co_return true;
    });
    stop_embedded_agents(embedded);
  };
  return std::unique_ptr<nic::nic_links>(
      std::make_unique<agent_nic_links>(relay, std::move(send_line), std::move(stop_job_fn), std::move(release)));
}

result<experiments::experiment_result> controller::impl::run_lab(const experiments::experiment_spec& spec,
                                                                  const run_request& request, std::int64_t run) {
  namespace nic = traffic::soft_nic;
  const lab_inventory& inv = *options_.inventory;  // run_spec checked it is there and fits
  std::vector<nic::fleet_host> hosts;
  std::vector<std::string> names;
  for (std::uint32_t i = 0; i < spec.topology.hosts; ++i) {
    const auto& h = inv.hosts[i];
    nic::fleet_host f;
    f.name = h.name;
    f.ifname = h.nic_device;
    auto ip = nic::parse_ipv4(h.nic_ip);
    if (!ip) return ip.error().with_context("inventory host " + h.name);
    f.address.ip = *ip;
    hosts.push_back(f);
    names.push_back(h.name);
  }
  if (!owner_->wait_for_agents(names, std::chrono::seconds(10), 1))
    return status(error_code::unavailable, "backend lab: not every host's agent is registered (" +
                                               std::to_string(names.size()) + " hosts: " + names.front() + "...)");
  // Snapshot and set the NICs' DCQCN knobs; restored whatever happens below.
  std::vector<std::string> applied;
  // Newest first, as every snapshot is undone.
  const auto restore_all = [&] {
    for (auto a = applied.rbegin(); a != applied.rend(); ++a)
      if (auto r = owner_->restore_settings(*a, std::chrono::seconds(10)); !r)
        log("restoring the NIC settings of " + *a + ": " + r.error().message());
  };
  for (std::uint32_t i = 0; i < hosts.size(); ++i) {
    if (inv.hosts[i].nic_driver != "mlx5") continue;
    std::vector<setting> settings;
    for (const auto& [name, value] : experiments::mlx5_knob_values(spec))
      settings.push_back({inv.hosts[i].nic_device, name, value});
    auto prev = owner_->apply_settings(names[i], "mlx5", settings, std::chrono::seconds(10));
    applied.push_back(names[i]);  // a failed apply may have changed some: restore it too
    if (!prev) {
      restore_all();
      return prev.error().with_context("backend lab: NIC settings of " + names[i]);
    }
  }
  experiments::experiment_result out;
  status failure;
  for (std::uint32_t r = 0; r < spec.repeats && failure.ok(); ++r) {
    if (r > 0 && request.cancel_requested && request.cancel_requested()) break;
    const std::uint64_t seed = spec.seed + r;
    if (request.on_repeat) request.on_repeat(r, seed);
    auto load = experiments::make_workload(spec, seed);
    if (!load) {
      failure = load.error();
      break;
    }
    nic::fleet_options fo;
    fo.nic.line_rate_bps = static_cast<std::int64_t>(spec.topology.link_gbps * 1e9);
    fo.nic.mtu_bytes = spec.nic.mtu_bytes;
    fo.nic.data_priority = static_cast<std::uint8_t>(spec.nic.data_priority);
    const auto limit = experiments::virtual_run_limit(spec);
    fo.links = [&](const std::vector<nic::fleet_host>& fh, const std::vector<nic::nic_process_config>&) {
      std::vector<std::string> configs;
      for (std::uint32_t i = 0; i < fh.size(); ++i)
        configs.push_back(nlohmann::json{{"host", i},
                                         {"hosts", fh.size()},
                                         {"netdev", fh[i].ifname},
                                         {"local_ip", inv.hosts[i].nic_ip},
                                         {"mtu", spec.nic.mtu_bytes},
                                         {"buffer_bytes", 1 << 20},
                                         {"tx_depth", 64}}
                              .dump());
      return open_agent_links(fh, job_kind::verbs, configs, run, 2 * limit + std::chrono::milliseconds(60'000));
    };
    auto fleet = nic::nic_fleet::start(hosts, fo);
    if (!fleet) {
      failure = fleet.error().with_context("backend lab: starting the verbs jobs");
      break;
    }
    auto ran = (*fleet)->run(**load, limit, request.cancel_requested);
    if (!ran) {
      failure = ran.error();
      break;
    }
    run_records rec = std::move(ran->records);
    rec.backend = "lab";
    rec.lost_hosts = ran->lost_hosts;
    out.seeds.push_back(seed);
    out.repeats.push_back(std::move(rec));
  }
  restore_all();
  if (!failure.ok()) return failure;
  return out;
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
  run_request request{s.source_name, s.sets, {}, [state] { return !state->any_open(); }, s.submission};
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

// ---- controller ----

controller::controller(std::unique_ptr<impl> p) : impl_(std::move(p)) { impl_->owner_ = this; }
controller::~controller() = default;

result<std::unique_ptr<controller>> controller::start(controller_options options) {
  auto p = std::make_unique<impl>(std::move(options));
  if (auto st = p->open(); !st.ok()) return st.with_context("starting the controller");
  return std::unique_ptr<controller>(new controller(std::move(p)));
}

std::string controller::address() const {
  boost::system::error_code ec;
  const auto ep = impl_->acceptor_.local_endpoint(ec);
  return ep.address().to_string() + ":" + std::to_string(ep.port());
}

std::uint16_t controller::port() const {
  boost::system::error_code ec;
  return impl_->acceptor_.local_endpoint(ec).port();
}

const std::string& controller::db_path() const noexcept { return impl_->options_.db_path; }

void controller::cancel_runs() noexcept { impl_->stopping_ = true; }

std::vector<agent_view> controller::agents() const { return impl_->agents(); }

bool controller::wait_for_agents(const std::vector<std::string>& names, std::chrono::milliseconds timeout,
                                 std::size_t min_clock_samples) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    const auto all = agents();
    std::size_t ready = 0;
    for (const auto& n : names)
      for (const auto& a : all)
        if (a.name == n && a.alive && a.clock_samples >= min_clock_samples) ++ready;
    if (ready == names.size()) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

bool controller::wait_for_agent_count(std::size_t count, std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    std::size_t alive = 0;
    for (const auto& a : agents()) alive += a.alive ? 1 : 0;
    if (alive >= count) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

result<std::vector<setting>> controller::apply_settings(const std::string& agent, const std::string& driver,
                                                        const std::vector<setting>& settings,
                                                        std::chrono::milliseconds timeout) {
  auto r = run_on<result<message>>(impl_->io_, [&] {
    return impl_->request(agent, [&](std::uint64_t id) -> message { return rocelab::controller::apply_settings{id, driver, settings}; },
                          timeout);
  });
  if (!r) return r.error();
  if (auto* e = std::get_if<error_message>(&*r)) return status(error_code::invalid_argument, "agent " + agent + ": " + e->message);
  if (auto* a = std::get_if<settings_applied>(&*r)) return a->previous;
  return status(error_code::internal, "agent " + agent + ": unexpected answer");
}

result<std::uint32_t> controller::restore_settings(const std::string& agent, std::chrono::milliseconds timeout) {
  auto r = run_on<result<message>>(impl_->io_, [&] {
    return impl_->request(agent, [](std::uint64_t id) -> message { return rocelab::controller::restore_settings{id}; },
                          timeout);
  });
  if (!r) return r.error();
  if (auto* e = std::get_if<error_message>(&*r)) return status(error_code::io_error, "agent " + agent + ": " + e->message);
  if (auto* a = std::get_if<settings_restored>(&*r)) return a->restored;
  return status(error_code::internal, "agent " + agent + ": unexpected answer");
}

result<jobs_result> controller::run_jobs(std::vector<job_plan> plans, std::chrono::milliseconds timeout,
                                         const std::function<void(const job_outcome&)>& on_report) {
  return run_on<result<jobs_result>>(impl_->io_, [&] { return impl_->co_run_jobs(std::move(plans), timeout, on_report); });
}

result<run_outcome> controller::run_spec(const experiments::experiment_spec& spec, const run_request& request) {
  ROCELAB_RETURN_IF_ERROR(experiments::validate(spec));
  if (spec.backend == "lab") {
    if (!impl_->options_.inventory)
      return status(error_code::invalid_argument, "backend lab: the controller has no lab inventory (--inventory)");
    ROCELAB_RETURN_IF_ERROR(validate_against(spec, *impl_->options_.inventory));
  }
  store::new_run nr;
  nr.name = spec.name;
  nr.backend = spec.backend;
  nr.seed = spec.seed;
  nr.spec_yaml = experiments::to_yaml(spec);
  for (const auto& set : request.sets)
    if (const auto eq = set.find('='); eq != std::string::npos) nr.parameters[set.substr(0, eq)] = set.substr(eq + 1);
  if (!request.submission.empty()) nr.parameters[submission_parameter] = request.submission;
  // Where the virtual lab keeps the run's capture, for its report to link.
  if (const auto& file = impl_->options_.virtual_options.capture_file; spec.backend == "virtual" && !file.empty()) {
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
  {
    std::lock_guard lock(impl_->store_mutex_);
    auto id = impl_->store_->begin_run(nr);
    if (!id) return id.error().with_context("storing the run");
    out.run = *id;
  }
  out.agents = agents();
  {
    std::lock_guard lock(impl_->store_mutex_);
    for (const auto& a : out.agents)
      (void)impl_->store_->add_agent(out.run, {a.name, a.address, a.clock_offset_ns, a.clock_uncertainty_ns,
                                               a.alive ? "ok" : "lost"});
  }
  const auto fail = [&](const status& st) -> result<run_outcome> {
    std::lock_guard lock(impl_->store_mutex_);
    (void)impl_->store_->finish(out.run, store::run_status::failed, st.message());
    out.status = "failed";
    out.error = st.message();
    return out;
  };
  // twin runs in this process; virtual runs its NICs on the agents of the lab's hosts.
  auto virtual_options = impl_->options_.virtual_options;
  if (spec.backend == "virtual")
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
  auto ran = spec.backend == "lab"
                 ? impl_->run_lab(spec, req, out.run)
                 : experiments::run_experiment(spec, req.on_repeat, virtual_options, req.cancel_requested);
  if (!ran) {
    if (ran.error().code() == error_code::invalid_argument) {
      std::lock_guard lock(impl_->store_mutex_);
      (void)impl_->store_->finish(out.run, store::run_status::failed, ran.error().message());
      return ran.error();
    }
    return fail(ran.error());
  }
  const bool interrupted = req.cancel_requested();
  {
    std::lock_guard lock(impl_->store_mutex_);
    // In bounded batches that stop at a cancel: storing millions of queue samples must not
    // outlast a Ctrl-C. A cancelled store keeps the batches it committed; the run is then
    // interrupted.
    store::append_options batches;
    batches.cancel_requested = request.cancel_requested;
    bool store_cancelled = false;
    for (const auto& r : ran->repeats) {
      if (store_cancelled) break;
      if (auto st = impl_->store_->append(out.run, r, batches); !st.ok()) {
        if (st.code() == error_code::cancelled) {
          store_cancelled = true;
          continue;
        }
        (void)impl_->store_->finish(out.run, store::run_status::failed, st.message());
        return st.with_context("storing records of run " + std::to_string(out.run));
      }
    }
    std::vector<std::string> lost;
    for (const auto& r : ran->repeats) lost.insert(lost.end(), r.lost_hosts.begin(), r.lost_hosts.end());
    if (interrupted || store_cancelled) {
      out.status = "interrupted";
      out.error = "cancelled by its requester (Ctrl-C, or the submitting client closed its connection) or by the "
                  "controller stopping; the records so far are kept";
      if (auto st = impl_->store_->finish(out.run, store::run_status::interrupted, out.error); !st.ok()) return st;
    } else if (!lost.empty()) {
      out.status = "partial";
      out.error = "lost during the run: ";
      for (std::size_t i = 0; i < lost.size(); ++i) out.error += (i ? "; " : "") + lost[i];
      out.error += " (the flows of the others and every record so far are kept)";
      if (auto st = impl_->store_->finish(out.run, store::run_status::partial, out.error); !st.ok()) return st;
    } else {
      // A degraded run (virtual lab: a switch that overran its reaction budget) completes
      // with its reasons as the store's note.
      std::string degraded;
      for (const auto& r : ran->repeats)
        for (const auto& d : r.degraded) degraded += (degraded.empty() ? "degraded: " : "; ") + d;
      if (auto st = impl_->store_->finish(out.run, store::run_status::completed, degraded); !st.ok()) return st;
      out.status = "completed";
    }
  }
  out.result = std::move(*ran);
  return out;
}

}  // namespace rocelab::controller
