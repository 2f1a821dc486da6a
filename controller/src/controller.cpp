#include "rocelab/controller/controller.hpp"

#include <unistd.h>

#include <algorithm>
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
#include "rocelab/controller/timebase.hpp"
#include "rocelab/experiments/spec_files.hpp"
#include "rocelab/experiments/exports.hpp"
#include "rocelab/experiments/build.hpp"
#include "rocelab/experiments/summary.hpp"
#include "rocelab/store/run_store.hpp"
#include "rocelab/traffic/soft_nic/nic_fleet.hpp"

namespace rocelab::controller {

using asio::use_awaitable;
using tcp = asio::ip::tcp;

namespace {

constexpr auto nothrow = asio::as_tuple(use_awaitable);
constexpr std::size_t probe_burst = 8;
constexpr std::chrono::milliseconds probe_burst_gap{20};

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

  ~impl() {
    asio::post(io_, [this] {
      boost::system::error_code ec;
      acceptor_.close(ec);
      for (auto& [n, e] : agents_)
        if (e->conn) e->conn->close();
      for (auto& c : clients_)
        if (auto s = c.lock()) s->close();
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
    for (auto& t : client_threads_)
      if (t.joinable()) t.join();
  }

  void log(const std::string& line) const {
    if (options_.log) std::cerr << "rocelab controller: " << line << "\n";
  }

  // ---- connections ----

  asio::awaitable<void> accept_loop() {
    while (acceptor_.is_open()) {
      auto [ec, socket] = co_await acceptor_.async_accept(nothrow);
      if (ec) {
        if (ec == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
        continue;  // EMFILE and friends: try the next one
      }
      boost::system::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      auto conn = std::make_shared<connection>(connection::tls_stream(std::move(socket), tls_->native()));
      asio::co_spawn(io_, session(conn), asio::detached);
    }
  }

  asio::awaitable<void> session(std::shared_ptr<connection> conn) {
    // Nothing is read or written in the clear: until the handshake proved the token, the
    // peer sees only TLS alerts.
    if (auto st = co_await conn->handshake(asio::ssl::stream_base::server, options_.handshake_timeout); !st.ok()) {
      ++rejected_;
      log("rejected " + conn->peer() + ": " + st.message());
      co_return;
    }
    conn->start_writer();
    auto first = co_await conn->read(options_.handshake_timeout);
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
    clients_.push_back(conn);
    conn->send(welcome{"client-" + std::to_string(++sessions_), options_.heartbeat_interval.count(), 0});
    while (conn->is_open()) {
      // Clients may wait long for a run; they heartbeat meanwhile.
      auto m = co_await conn->read(std::max(options_.agent_timeout * 4, std::chrono::milliseconds(30000)));
      if (!m) break;
      if (std::holds_alternative<heartbeat>(*m)) {
        conn->send(heartbeat{0});
      } else if (auto* s = std::get_if<submit_run>(&*m)) {
        start_client_run(conn, *s);
      } else {
        conn->send(error_message{0, "invalid argument",
                                 std::string("controller does not take ") + to_string(type_of(*m)) + " from clients"});
      }
    }
    conn->close();
  }

  void start_client_run(std::shared_ptr<connection> conn, submit_run s);

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

  controller_options options_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_ = asio::make_work_guard(io_);
  std::unique_ptr<tls_context> tls_;
  tcp::acceptor acceptor_;
  std::thread thread_;
  std::mutex store_mutex_;
  std::optional<store::run_store> store_;
  std::map<std::string, std::shared_ptr<agent_entry>> agents_;
  std::vector<std::weak_ptr<connection>> clients_;
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
  std::vector<std::thread> client_threads_;
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

void controller::impl::start_client_run(std::shared_ptr<connection> conn, submit_run s) {
  std::lock_guard lock(client_threads_mutex_);
  client_threads_.emplace_back([this, conn, s = std::move(s)] {
    run_finished done;
    done.request = s.request;
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
    } else {
      auto out = owner_->run_spec(*spec, run_request{s.source_name, s.sets, {}, [conn] { return !conn->is_open(); }});
      if (!out) {
        done.status = "failed";
        done.error = out.error().message();
      } else {
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
      }
    }
    asio::post(io_, [conn, done] { conn->send(done); });
  });
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
                 ? impl_->run_lab(spec, request, out.run)
                 : experiments::run_experiment(spec, request.on_repeat, virtual_options, request.cancel_requested);
  if (!ran) {
    if (ran.error().code() == error_code::invalid_argument) {
      std::lock_guard lock(impl_->store_mutex_);
      (void)impl_->store_->finish(out.run, store::run_status::failed, ran.error().message());
      return ran.error();
    }
    return fail(ran.error());
  }
  const bool interrupted = request.cancel_requested && request.cancel_requested();
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
      out.error = "cancelled by its requester (Ctrl-C, or the submitting client closed its connection); the records so far are kept";
      if (auto st = impl_->store_->finish(out.run, store::run_status::interrupted, out.error); !st.ok()) return st;
    } else if (!lost.empty()) {
      out.status = "partial";
      out.error = "lost during the run: ";
      for (std::size_t i = 0; i < lost.size(); ++i) out.error += (i ? "; " : "") + lost[i];
      out.error += " (the flows of the others and every record so far are kept)";
      if (auto st = impl_->store_->finish(out.run, store::run_status::partial, out.error); !st.ok()) return st;
    } else {
      if (auto st = impl_->store_->finish(out.run, store::run_status::completed); !st.ok()) return st;
      out.status = "completed";
    }
  }
  out.result = std::move(*ran);
  return out;
}

}  // namespace rocelab::controller
