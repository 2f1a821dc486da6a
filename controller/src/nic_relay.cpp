// The NIC relay: a run's soft (or verbs) NICs driven through the agents of its hosts. Each
// host's NIC is a job on that host's agent; the fleet's command lines go out as
// nic_command, the NIC's event lines come back as nic_event, mapped onto the controller's
// clock, into the relay the fleet reads (agent_nic_links.hpp). Hosts of a virtual lab
// without an agent get one in this process from the controller's agent_launcher.

#include <algorithm>

#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>

#include "agent_nic_links.hpp"
#include "controller_impl.hpp"
#include "rocelab/protocol/timebase.hpp"
#include "rocelab/traffic/soft_nic/nic_line_times.hpp"

namespace rocelab::controller {

using namespace rocelab::protocol;

result<std::vector<std::string>> controller::impl::start_in_process_agents(
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
  if (!options_.launcher) {
    std::string names;
    for (const auto& n : missing) names += (names.empty() ? "" : ", ") + n;
    return status(error_code::unavailable,
                  "no agent registered for " + names + " and this controller starts none in process");
  }
  boost::system::error_code ec;
  auto ep = acceptor_.local_endpoint(ec);
  if (ec) return status(error_code::unavailable, "embedded agents: the controller is not listening");
  // Agents reach a controller listening on every address through loopback.
  const std::string host = ep.address().is_unspecified() ? "127.0.0.1" : ep.address().to_string();
  std::lock_guard lock(in_process_mutex_);
  for (const auto& h : hosts) {
    if (std::find(missing.begin(), missing.end(), h.name) == missing.end()) continue;
    agent_launch launch;
    launch.controller = host + ":" + std::to_string(ep.port());
    launch.name = h.name;
    launch.token = options_.token;
    launch.netns = h.netns;
    launch.rocelab_binary = options_.virtual_options.rocelab_binary;
    launch.log_dir = options_.virtual_options.log_dir;
    launch.log = options_.log;
    if (auto st = options_.launcher->start(launch); !st.ok()) return st.with_context("embedded agent " + h.name);
    in_process_.insert(h.name);
  }
  log("no agent registered for " + std::to_string(missing.size()) + " of the run's hosts; started them in the controller");
  return missing;
}

void controller::impl::stop_in_process_agents(const std::vector<std::string>& names) {
  std::lock_guard lock(in_process_mutex_);
  for (const auto& n : names)
    if (in_process_.erase(n) > 0) options_.launcher->stop(n);
}

result<std::unique_ptr<traffic::soft_nic::nic_links>> controller::impl::open_agent_links(
    const std::vector<traffic::soft_nic::fleet_host>& hosts, job_kind kind,
    const std::vector<std::string>& transport_configs, std::int64_t run, std::chrono::milliseconds job_timeout) {
  namespace nic = traffic::soft_nic;
  // Hosts of the virtual lab without an agent get one here; a real lab's must have theirs.
  auto in_process = kind == job_kind::soft ? start_in_process_agents(hosts)
                                           : result<std::vector<std::string>>(std::vector<std::string>{});
  if (!in_process) return in_process.error();
  std::vector<std::string> names;
  for (const auto& h : hosts) names.push_back(h.name);
  if (!owner_->wait_for_agents(names, std::chrono::seconds(10))) {
    stop_in_process_agents(*in_process);
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
    std::shared_ptr<const run_clock> clock;
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
    // One mapping for the run's NICs, from their start to their last line (run_clock.hpp).
    auto chosen = choose_clock(out.entries);
    if (!chosen) co_return chosen.error();
    out.clock = std::make_shared<const run_clock>(std::move(*chosen));
    {
      std::lock_guard lock(run_clocks_mutex_);
      run_clocks_[run] = *out.clock;
    }
    auto clock = out.clock;
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
      j.start_at_ns = clock->agents[i].to_agent(monotonic_ns());
      j.host = i;
      j.timeout_ms = job_timeout.count();
      for (const auto& h : hosts) j.hosts.push_back(h.name);
      j.transport_config = transport_configs[i];
      job_listeners_[id] = [relay, i](agent_entry& e, const job_report& r) {
        if (r.done) relay->end(i, r.error.empty() ? "" : "agent " + e.name + ": " + r.error);
      };
      // The NIC's times are in the agent's clock; the fleet's are the controller's.
      nic_listeners_[id] = [relay, i, ex, clock](agent_entry&, const nic_event& ev) {
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
          traffic::soft_nic::map_event_times(j, [&](std::int64_t t) { return clock->agents[i].to_controller(t); });
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
    stop_in_process_agents(*in_process);
    return st.error();
  }
  auto entries = st->entries;
  auto jobs = st->jobs;
  auto send_line = [this, entries, jobs, clock = st->clock](std::uint32_t h, std::string line) {
    asio::post(io_, [e = entries[h], id = jobs[h], map = clock->agents[h], line = std::move(line)]() mutable {
      if (!e->alive) return;
      // An armed post's instant is on the controller's clock; its NIC holds it on the agent's.
      line = traffic::soft_nic::map_command_times(line, [&map](std::int64_t t) { return map.to_agent(t); });
      e->conn->send(nic_command{id, {line}});
    });
  };
  auto stop_job_fn = [this, entries, jobs](std::uint32_t h) {
    asio::post(io_, [e = entries[h], id = jobs[h]] {
      if (e->alive) e->conn->send(stop_job{id});
    });
  };
  auto release = [this, jobs, listener = st->listener, in_process = *in_process] {
    run_on<bool>(io_, [&]() -> asio::awaitable<bool> {
      loss_listeners_.erase(listener);
      for (auto id : jobs) {
        job_listeners_.erase(id);
        nic_listeners_.erase(id);
      }
      co_return true;
    });
    stop_in_process_agents(in_process);
  };
  return std::unique_ptr<nic::nic_links>(
      std::make_unique<agent_nic_links>(relay, std::move(send_line), std::move(stop_job_fn), std::move(release)));
}

}  // namespace rocelab::controller
