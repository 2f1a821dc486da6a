#include "rocelab/agents/agent/agent.hpp"

#include <unistd.h>

#include <iostream>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "clock_exchanges.hpp"
#include "job_runner.hpp"

namespace rocelab::agents::agent {

using asio::use_awaitable;

namespace {
constexpr auto nothrow = asio::as_tuple(use_awaitable);
constexpr std::chrono::milliseconds welcome_timeout{5000};
}  // namespace

result<std::shared_ptr<agent>> agent::make(agent_options options) {
  if (options.name.empty()) return status(error_code::invalid_argument, "agent: a name is required");
  if (options.deadman.count() <= 0) return status(error_code::invalid_argument, "agent: dead-man time must be positive");
  auto tls = protocol::tls_context::make(protocol::tls_role::client, options.token);
  if (!options.gate) options.gate = std::make_shared<start_gate>();
  if (!options.host_clock) options.host_clock = clock::host_clock_monitor::of_this_host();
  if (!tls) return tls.error().with_context("agent " + options.name);
  return std::shared_ptr<agent>(new agent(std::move(options), std::move(*tls)));
}

agent::agent(agent_options options, std::unique_ptr<protocol::tls_context> tls)
    : options_(std::move(options)),
      tls_(std::move(tls)),
      settings_(options_.sysfs_root),
      deadman_(options_.deadman) {}

agent::~agent() = default;

void agent::log(const std::string& line) const {
  if (options_.log) std::cerr << "rocelab agent " << options_.name << ": " << line << "\n";
}

agent_stats agent::stats() const {
  std::lock_guard lock(stats_mutex_);
  return stats_;
}

void agent::start(asio::any_io_executor executor) {
  executor_ = executor;
  last_heard_ns_ = protocol::monotonic_ns();
  asio::co_spawn(executor_, [self = shared_from_this()] { return self->run_loop(); }, asio::detached);
  asio::co_spawn(executor_, [self = shared_from_this()] { return self->watchdog(); }, asio::detached);
}

void agent::stop() {
  asio::post(executor_, [self = shared_from_this()] {
    self->stopping_ = true;
    for (auto& [id, j] : self->jobs_) j->cancel();
    self->jobs_.clear();
    if (self->current_) self->current_->close();
  });
}

asio::awaitable<void> agent::run_loop() {
  auto self = shared_from_this();
  while (!stopping_) {
    auto conn = co_await protocol::connect_to(executor_, tls_->native(), options_.controller, options_.connect_timeout);
    if (stopping_) break;
    if (conn) {
      co_await session(*conn);
    } else {
      std::lock_guard lock(stats_mutex_);
      if (stats_.last_error != conn.error().message()) log(conn.error().message());
      stats_.last_error = conn.error().message();
      ++stats_.connect_failures;
    }
    if (stopping_) break;
    asio::steady_timer wait(executor_, options_.reconnect_interval);
    co_await wait.async_wait(nothrow);
  }
}

asio::awaitable<void> agent::session(std::shared_ptr<protocol::connection> conn) {
  conn->start_writer();
  protocol::hello h;
  h.role = protocol::peer_role::agent;
  h.name = options_.name;
  h.transports = available_transports();
  h.pid = ::getpid();
  conn->send(h);
  auto first = co_await conn->read(welcome_timeout);
  if (!first || !std::holds_alternative<protocol::welcome>(*first)) {
    const std::string why = !first ? first.error().message()
                                   : std::string("expected welcome, got ") + protocol::to_string(protocol::type_of(*first));
    if (auto* e = first ? std::get_if<protocol::error_message>(&*first) : nullptr) log("refused: " + e->message);
    else log("session: " + why);
    conn->close();
    co_return;
  }
  const auto& w = std::get<protocol::welcome>(*first);
  // The controller may ask for a shorter dead-man time (it knows the run's pace), never a
  // longer one than the operator configured here.
  deadman_ = options_.deadman;
  if (w.deadman_ms > 0) deadman_ = std::min(deadman_, std::chrono::milliseconds(w.deadman_ms));
  const auto interval = std::chrono::milliseconds(std::max<std::int64_t>(w.heartbeat_interval_ms, 10));
  current_ = conn;
  last_heard_ns_ = protocol::monotonic_ns();
  {
    std::lock_guard lock(stats_mutex_);
    ++stats_.connects;
    stats_.connected = true;
    stats_.last_error.clear();
  }
  log("registered with " + options_.controller + " (session " + w.session + ")");
  asio::co_spawn(executor_, heartbeats(conn, interval), asio::detached);
  if (w.clock_port != 0 && w.clock_cookie != 0 && conn->remote().port() != 0) {
    clock_exchange_plan plan;
    plan.service = asio::ip::udp::endpoint(conn->remote().address(), w.clock_port);
    plan.cookie = w.clock_cookie;
    plan.clock = options_.clock;
    plan.interval = interval;
    asio::co_spawn(executor_,
                   run_clock_exchanges(
                       executor_, conn, plan, [self = shared_from_this()](const std::string& line) { self->log(line); },
                       [self = shared_from_this()] {
                         std::lock_guard lock(self->stats_mutex_);
                         ++self->stats_.clock_exchanges;
                       }),
                   asio::detached);
  }
  while (conn->is_open() && !stopping_) {
    // Reads wait at most the dead-man time: the controller heartbeats far more often.
    auto m = co_await conn->read(deadman_ + interval);
    if (!m) {
      if (!stopping_) log("connection lost: " + m.error().message());
      break;
    }
    last_heard_ns_ = protocol::monotonic_ns();
    handle(conn, *m);
  }
  conn->close();
  if (current_ == conn) current_.reset();
  std::lock_guard lock(stats_mutex_);
  stats_.connected = false;
}

asio::awaitable<void> agent::heartbeats(std::shared_ptr<protocol::connection> conn, std::chrono::milliseconds interval) {
  std::uint64_t seq = 0;
  asio::steady_timer t(executor_);
  while (conn->is_open()) {
    conn->send(protocol::heartbeat{++seq});
    t.expires_after(interval);
    co_await t.async_wait(nothrow);
  }
}

asio::awaitable<void> agent::watchdog() {
  auto self = shared_from_this();
  asio::steady_timer t(executor_);
  while (!stopping_) {
    t.expires_after(std::max(std::chrono::milliseconds(10), deadman_ / 8));
    co_await t.async_wait(nothrow);
    if (stopping_) break;
    const auto silent = std::chrono::nanoseconds(protocol::monotonic_ns() - last_heard_ns_);
    if (silent > deadman_ && (settings_.has_changes() || !jobs_.empty())) deadman_fire();
  }
}

void agent::deadman_fire() {
  log("dead-man switch: nothing from the controller for " + std::to_string(deadman_.count()) +
      " ms; stopping jobs and restoring settings");
  for (auto& [id, j] : jobs_) j->cancel();
  jobs_.clear();
  auto restored = settings_.restore();
  std::lock_guard lock(stats_mutex_);
  ++stats_.deadman_restores;
  if (restored) {
    stats_.settings_restored += *restored;
    log("dead-man switch: restored " + std::to_string(*restored) + " settings");
  } else {
    log(restored.error().message());
  }
}

void agent::handle(const std::shared_ptr<protocol::connection>& conn, const protocol::message& m) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, protocol::heartbeat>) {
          // Liveness only (last_heard_ns_ is already updated).
        } else if constexpr (std::is_same_v<T, protocol::clock_probe>) {
          protocol::clock_reply r{x.seq, x.t1_ns, options_.clock.now_ns(), 0, {}};
          if (options_.host_clock) {
            const clock::clock_source src = options_.host_clock->current();
            r.host_clock = protocol::host_clock_reading{clock::to_string(src.kind), src.error_bound_ns,
                                                        clock::realtime_minus_monotonic_ns() - options_.clock.offset_ns,
                                                        src.detail};
          }
          r.t3_ns = options_.clock.now_ns();
          conn->send_first(r);
          std::lock_guard lock(stats_mutex_);
          ++stats_.probes_answered;
        } else if constexpr (std::is_same_v<T, protocol::apply_settings>) {
          auto previous = settings_.apply(x.driver, x.settings);
          for (const auto& line : settings_.not_set()) log("apply_settings: " + line);
          if (previous)
            conn->send(protocol::settings_applied{x.request, std::move(*previous)});
          else
            conn->send(protocol::error_message{x.request, std::string(to_string(previous.error().code())),
                                          previous.error().message()});
        } else if constexpr (std::is_same_v<T, protocol::restore_settings>) {
          auto restored = settings_.restore();
          if (restored) {
            conn->send(protocol::settings_restored{x.request, *restored});
          } else {
            conn->send(protocol::error_message{x.request, std::string(to_string(restored.error().code())),
                                          restored.error().message()});
          }
        } else if constexpr (std::is_same_v<T, protocol::start_job>) {
          start_job(conn, x);
        } else if constexpr (std::is_same_v<T, protocol::stop_job>) {
          if (auto it = jobs_.find(x.job); it != jobs_.end()) it->second->cancel();
        } else if constexpr (std::is_same_v<T, protocol::nic_command>) {
          if (auto it = jobs_.find(x.job); it != jobs_.end()) it->second->command(x.lines);
        } else {
          // A message an agent never receives: answer, keep the session (it was well-formed).
          conn->send(protocol::error_message{0, "invalid argument",
                                        std::string("agent does not take ") + protocol::to_string(protocol::type_of(m))});
        }
      },
      m);
}

void agent::start_job(const std::shared_ptr<protocol::connection>& conn, const protocol::start_job& j) {
  if (jobs_.contains(j.job)) {
    conn->send(protocol::error_message{j.job, "invalid argument", "job " + std::to_string(j.job) + " is already running"});
    return;
  }
  {
    std::lock_guard lock(stats_mutex_);
    ++stats_.jobs_started;
  }
  std::weak_ptr<protocol::connection> weak = conn;
  auto self = shared_from_this();
  // The job reports through the connection it came on; if that one is gone, the
  // controller has already marked the run partial and the report has nowhere to go.
  auto report = [self, weak, id = j.job](protocol::job_report r) {
    r.job = id;
    const bool done = r.done;
    if (auto c = weak.lock()) c->send(r);
    if (done) {
      self->jobs_.erase(id);
      std::lock_guard lock(self->stats_mutex_);
      ++self->stats_.jobs_reported;
    }
  };
  job_context context;
  context.executor = executor_;
  context.clock = options_.clock;
  context.gate = options_.gate;
  context.rocelab_binary = options_.rocelab_binary.empty() ? std::string("/proc/self/exe") : options_.rocelab_binary;
  context.netns = options_.netns;
  context.log_dir = options_.log_dir;
  context.agent_name = options_.name;
  context.report = report;
  context.events = [weak, id = j.job](std::vector<std::string> lines) {
    if (auto c = weak.lock()) c->send(protocol::nic_event{id, std::move(lines)});
  };
  auto runner = make_job(j, std::move(context));
  if (!runner) {
    protocol::job_report r;
    r.done = true;
    r.error = runner.error().message();
    report(std::move(r));
    return;
  }
  jobs_[j.job] = *runner;
  (*runner)->start();
}

}  // namespace rocelab::agents::agent
