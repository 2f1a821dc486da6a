// The registry: agents, their sessions (hello, heartbeats, clock probes) and the requests
// the controller sends one agent at a time (NIC settings).

#include <thread>

#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>

#include "controller_impl.hpp"
#include "rocelab/protocol/timebase.hpp"

namespace rocelab::controller {

using namespace rocelab::protocol;

namespace {

constexpr std::size_t probe_burst = 8;
constexpr std::chrono::milliseconds probe_burst_gap{20};

}  // namespace

std::optional<std::pair<clock_estimate, const char*>> best_clock_estimate(const agent_entry& e, std::int64_t use_at_ns) {
  const auto tls = e.clock.estimate(use_at_ns);
  const auto udp = e.udp_clock.estimate(use_at_ns);
  if (udp && (!tls || udp->uncertainty_ns <= tls->uncertainty_ns)) return std::pair{*udp, "udp"};
  if (tls) return std::pair{*tls, "tls"};
  return std::nullopt;
}

agent_view view_of(const agent_entry& e) {
  agent_view v;
  v.name = e.name;
  v.address = e.address;
  v.transports = e.transports;
  v.alive = e.alive;
  v.registered_ns = e.registered_ns;
  if (auto best = best_clock_estimate(e, monotonic_ns())) {
    v.clock_offset_ns = best->first.offset_ns;
    v.clock_uncertainty_ns = best->first.uncertainty_ns;
    // Both kinds count: a run may start once the agent has answered enough of either.
    v.clock_samples = e.clock.size() + e.udp_clock.size();
    v.clock_probes = best->second;
  }
  if (e.host) {
    v.host_clock_source = e.host->source;
    v.host_clock_error_bound_ns = e.host->error_bound_ns;
    v.host_clock_detail = e.host->detail;
  }
  return v;
}

asio::awaitable<void> controller::impl::agent_session(std::shared_ptr<connection> conn, hello h) {
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
  e->clock_cookie = clock_service_.port() != 0 ? clock_service_.admit() : 0;
  conn->send(welcome{session_id, options_.heartbeat_interval.count(), options_.deadman.count(),
                     e->clock_cookie != 0 ? clock_service_.port() : std::uint16_t{0}, e->clock_cookie});
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
  clock_service_.forget(e->clock_cookie);
  for (auto& [id, done] : e->pending) done(status(error_code::cancelled, "agent " + e->name + " lost: " + why));
  e->pending.clear();
  // Forgotten once gone: a name costs nothing after its agent left, and later runs list
  // only the agents there at their start (a run it was part of stores it lost).
  if (auto it = agents_.find(e->name); it != agents_.end() && it->second == e) {
    agents_.erase(it);
    log("agent " + e->name + " lost: " + why);
    for (auto& [id, l] : loss_listeners_) l(e->name, why);
  }
}

asio::awaitable<void> controller::impl::prober(std::shared_ptr<agent_entry> e) {
  asio::steady_timer t(io_);
  for (std::size_t n = 0; e->alive && e->conn->is_open(); ++n) {
    // Ahead of queued frames once the agent has answered one probe (so it has read its
    // welcome, which must come first); the first goes in order behind the welcome.
    const clock_probe probe{++e->probe_seq, monotonic_ns()};
    if (e->clock.estimate())
      e->conn->send_first(probe);
    else
      e->conn->send(probe);
    t.expires_after(n < probe_burst ? std::chrono::duration_cast<std::chrono::nanoseconds>(probe_burst_gap)
                                    : std::chrono::duration_cast<std::chrono::nanoseconds>(options_.heartbeat_interval));
    co_await t.async_wait(nothrow);
  }
}

void controller::impl::on_agent_message(agent_entry& e, const message& m) {
  if (auto* r = std::get_if<clock_reply>(&m)) {
    // t4 is taken here, before any other work on the reply.
    (void)e.clock.add(r->t1_ns, r->t2_ns, r->t3_ns, monotonic_ns());
    if (r->host_clock) {
      // Both hosts' realtime clocks agree (to their bounds): agent clock - controller clock
      // = (realtime - controller clock) - (realtime - agent clock).
      host_offset h;
      h.source = r->host_clock->source;
      h.offset_ns = static_cast<double>(agents::clock::realtime_minus_monotonic_ns() - r->host_clock->realtime_minus_clock_ns);
      h.error_bound_ns = static_cast<double>(r->host_clock->error_bound_ns);
      h.detail = r->host_clock->detail;
      e.host = std::move(h);
    } else {
      e.host.reset();
    }
  } else if (auto* x = std::get_if<clock_exchange>(&m)) {
    (void)e.udp_clock.add_agent_initiated(x->t1_ns, x->t2_ns, x->t3_ns, x->t4_ns);
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

bool controller::impl::resolve(agent_entry& e, std::uint64_t request, const message& m) {
  auto it = e.pending.find(request);
  if (it == e.pending.end()) return false;
  auto done = std::move(it->second);
  e.pending.erase(it);
  done(m);
  return true;
}

result<run_clock> controller::impl::choose_clock(const std::vector<std::shared_ptr<agent_entry>>& entries) const {
  std::vector<agent_clock_inputs> in;
  // The estimates are aged to about when the run starts (T0 is start_lead ahead, plus
  // the probes' round trips).
  const std::int64_t use_at_ns = monotonic_ns() + std::chrono::nanoseconds(options_.start_lead).count();
  for (const auto& e : entries) {
    const auto best = best_clock_estimate(*e, use_at_ns);
    in.push_back({e->name, best ? std::optional(best->first) : std::nullopt, e->host});
  }
  const agents::clock::clock_source own = host_clock_->current();
  return choose_run_clock(in, {own.synchronised(), static_cast<double>(own.error_bound_ns), own.detail});
}

std::vector<agent_view> controller::impl::agents() {
  return run_on<std::vector<agent_view>>(io_, [this]() -> asio::awaitable<std::vector<agent_view>> {
    std::vector<agent_view> out;
    for (const auto& [n, e] : agents_) out.push_back(view_of(*e));
    co_return out;
  });
}

asio::awaitable<result<message>> controller::impl::request(std::string agent,
                                                           std::function<message(std::uint64_t)> make,
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
    return impl_->request(agent, [&](std::uint64_t id) -> message { return protocol::apply_settings{id, driver, settings}; },
                          timeout);
  });
  if (!r) return r.error();
  if (auto* e = std::get_if<error_message>(&*r)) return status(error_code::invalid_argument, "agent " + agent + ": " + e->message);
  if (auto* a = std::get_if<settings_applied>(&*r)) return a->previous;
  return status(error_code::internal, "agent " + agent + ": unexpected answer");
}

result<std::uint32_t> controller::restore_settings(const std::string& agent, std::chrono::milliseconds timeout) {
  auto r = run_on<result<message>>(impl_->io_, [&] {
    return impl_->request(agent, [](std::uint64_t id) -> message { return protocol::restore_settings{id}; },
                          timeout);
  });
  if (!r) return r.error();
  if (auto* e = std::get_if<error_message>(&*r)) return status(error_code::io_error, "agent " + agent + ": " + e->message);
  if (auto* a = std::get_if<settings_restored>(&*r)) return a->restored;
  return status(error_code::internal, "agent " + agent + ": unexpected answer");
}

}  // namespace rocelab::controller
