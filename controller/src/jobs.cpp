// Jobs on several agents started at one instant: T0 is chosen far enough ahead that the
// slowest start_job arrives first, each agent gets it in its own clock, and the reports are
// mapped back onto the controller's timeline relative to T0.

#include <algorithm>

#include <boost/asio/steady_timer.hpp>

#include "controller_impl.hpp"
#include "rocelab/protocol/timebase.hpp"

namespace rocelab::controller {

using namespace rocelab::protocol;

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
  for (const auto& p : plans) {
    auto it = agents_.find(p.agent);
    if (it == agents_.end() || !it->second->alive)
      co_return status(error_code::not_found, "agent " + p.agent + " is not registered");
    entries.push_back(it->second);
    st->by_agent[p.agent] = st->outcomes.size();
    job_outcome o;
    o.agent = p.agent;
    st->outcomes.push_back(std::move(o));
  }
  // One mapping for the whole run: the start instants sent and the reports mapped back use
  // the same offsets, so a probe that arrives in between cannot make a start look early.
  auto chosen = choose_clock(entries);
  if (!chosen) co_return chosen.error();
  auto clock = std::make_shared<run_clock>(std::move(*chosen));
  double worst_rtt_ns = 0;
  for (const auto& e : entries) worst_rtt_ns = std::max(worst_rtt_ns, 2 * e->clock.estimate()->uncertainty_ns);
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
    p.job.start_at_ns = clock->agents[i].to_agent(st->t0);
    st->outcomes[i].clock_offset_ns = clock->agents[i].offset_ns;
    job_listeners_[id] = [st, wake, i, on_report, clock](agent_entry&, const job_report& r) {
      const agent_clock_map& map = clock->agents[i];
      auto& o = st->outcomes[i];
      if (o.reported || o.lost) return;
      job_outcome delta;
      delta.agent = o.agent;
      if (r.started_ns != 0) {
        o.agent_started_ns = r.started_ns;
        o.started_ns = map.to_controller(r.started_ns);
      }
      delta.started_ns = o.started_ns;
      delta.agent_started_ns = o.agent_started_ns;
      delta.clock_offset_ns = o.clock_offset_ns;
      for (flow_record f : r.flows) {
        f.start_ns = map.to_controller(f.start_ns) - st->t0;
        if (f.end_ns >= 0) f.end_ns = map.to_controller(f.end_ns) - st->t0;
        delta.flows.push_back(f);
      }
      for (counter_sample c : r.counters) {
        c.t_ns = map.to_controller(c.t_ns) - st->t0;
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
  co_return jobs_result{st->t0, std::move(st->outcomes), std::move(*clock)};
}

std::optional<run_clock> controller::clock_of_run(std::int64_t run) const {
  std::lock_guard lock(impl_->run_clocks_mutex_);
  auto it = impl_->run_clocks_.find(run);
  if (it == impl_->run_clocks_.end()) return std::nullopt;
  return it->second;
}

result<jobs_result> controller::run_jobs(std::vector<job_plan> plans, std::chrono::milliseconds timeout,
                                         const std::function<void(const job_outcome&)>& on_report) {
  return run_on<result<jobs_result>>(impl_->io_, [&] { return impl_->co_run_jobs(std::move(plans), timeout, on_report); });
}

}  // namespace rocelab::controller
