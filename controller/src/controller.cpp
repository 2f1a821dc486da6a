#include "rocelab/controller/controller.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>

#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "controller_impl.hpp"
#include "rocelab/common/realtime_section.hpp"

namespace rocelab::controller {

using namespace rocelab::protocol;

namespace {

constexpr std::chrono::milliseconds accept_backoff_first{10};
constexpr std::chrono::milliseconds accept_backoff_max{1000};
// At the unauthenticated cap the accept loop looks this often for a freed slot.
constexpr std::chrono::milliseconds slot_poll_interval{5};
// How long a stopping controller lets its last answers drain, at most, before it closes the clients.
constexpr std::chrono::milliseconds final_flush{50};

// An accept that failed for want of descriptors or kernel memory: waiting, not retrying at
// once, is what keeps a full table from costing a core.
bool out_of_resources(const boost::system::error_code& ec) {
  return ec == asio::error::no_descriptors || ec == boost::system::errc::too_many_files_open_in_system ||
         ec == asio::error::no_buffer_space || ec == asio::error::no_memory;
}

}  // namespace

status controller::impl::open() {
  auto tls = tls_context::make(tls_role::server, options_.token);
  if (!tls) return tls.error();
  tls_ = std::move(*tls);
  host_clock_ = options_.host_clock ? options_.host_clock : agents::clock::host_clock_monitor::of_this_host();
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
  // Without a clock service the agents keep to their TLS probes: a run still starts,
  // with a wider start uncertainty, which the run reports.
  if (auto st = clock_service_.open(addr, acceptor_.local_endpoint(ec).port()); !st.ok())
    log(st.message() + "; agents' clocks are estimated through their TLS sessions only");
  else
    asio::co_spawn(io_, clock_service_.serve(), asio::detached);
  asio::co_spawn(io_, accept_loop(), asio::detached);
  thread_ = std::thread([this] {
    if (options_.io_rt_priority > 0 && !set_thread_priority(options_.io_rt_priority))
      log("SCHED_FIFO " + std::to_string(options_.io_rt_priority) + " refused for the connection thread (" +
          std::strerror(errno) + "); heartbeats may come late while a lab runs");
    io_.run();
  });
  return status::success();
}

controller::impl::~impl() {
  stopping_ = true;
  asio::post(io_, [this] {
    boost::system::error_code ec;
    acceptor_.close(ec);
    clock_service_.close();
  });
  join_client_runs();
  asio::post(io_, [this] {
    for (auto& [n, e] : agents_)
      if (e->conn) e->conn->close();
    for (auto& [n, w] : workers_)
      if (w->conn) w->conn->close();
    // Nobody will run the trials still waiting: their callers get them back cancelled.
    std::vector<std::uint64_t> waiting;
    for (const auto& [t, _] : trial_waiters_) waiting.push_back(t);
    for (const std::uint64_t t : waiting)
      if (auto f = trials_.cancel(t, "cancelled: the controller is stopping")) finish_trial(*f, nullptr, nullptr);
    for (auto& [id, u] : unauthenticated_)
      if (auto c = u.conn.lock()) c->close();
    asio::co_spawn(io_, close_clients_once_flushed(), asio::detached);
    work_.reset();
  });
  if (thread_.joinable()) thread_.join();
  {
    std::lock_guard lock(in_process_mutex_);
    for (const auto& name : in_process_) options_.launcher->stop(name);
    in_process_.clear();
  }
  join_client_runs();
}

asio::awaitable<void> controller::impl::close_clients_once_flushed() {
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

bool controller::impl::shed_unauthenticated(std::size_t keep) {
  bool shed = false;
  while (unauthenticated_.size() > keep) {
    auto oldest = unauthenticated_.begin();
    if (auto c = oldest->second.conn.lock()) {
      log("shedding " + c->peer() + ": it has not authenticated and " + std::to_string(unauthenticated_.size()) +
          " connections are waiting to (limit " + std::to_string(options_.max_unauthenticated) + ")");
      c->close();
      shed = true;
    }
    unauthenticated_.erase(oldest);
  }
  return shed;
}

asio::awaitable<void> controller::impl::make_room(const asio::ip::address& source) {
  // Held, not yet served, while a handshake under way may still end: shedding at once, as
  // for idle connections, would under a crowd of agents connecting together (a lab's
  // controller restarting) close the handshakes furthest along to admit ones just begun,
  // so few would ever finish.
  const std::size_t cap = std::max<std::size_t>(options_.max_unauthenticated, 1);
  const std::size_t source_cap = std::max<std::size_t>(options_.max_unauthenticated_per_source, 1);
  asio::steady_timer pause(io_);
  while (acceptor_.is_open()) {
    std::size_t from_source = 0;
    for (const auto& [id, u] : unauthenticated_) from_source += u.source == source ? 1 : 0;
    const bool source_full = from_source >= source_cap;
    if (!source_full && unauthenticated_.size() < cap) co_return;
    // The candidates: that source's when its own cap binds, else all; oldest first.
    const auto candidate = [&](const unauthenticated_connection& u) { return !source_full || u.source == source; };
    const auto now = std::chrono::steady_clock::now();
    // The oldest silent one (no byte yet, not even one the session has not looked at) once
    // it has been silent for silent_grace: an idle connection, not a peer about to speak.
    auto victim = unauthenticated_.end();
    auto next_check = now + slot_poll_interval;
    for (auto it = unauthenticated_.begin(); it != unauthenticated_.end(); ++it) {
      if (!candidate(it->second)) continue;
      auto c = it->second.conn.lock();
      if (c && (it->second.spoke || c->unread_bytes() > 0)) continue;
      if (!c || now >= it->second.accepted + options_.silent_grace) {
        victim = it;
        break;
      }
      next_check = std::min(next_check, it->second.accepted + options_.silent_grace);
      break;  // the oldest silent one is not idle yet; younger ones are not either
    }
    auto oldest = std::find_if(unauthenticated_.begin(), unauthenticated_.end(),
                               [&](const auto& e) { return candidate(e.second); });
    if (victim == unauthenticated_.end() && oldest != unauthenticated_.end() &&
        now >= oldest->second.accepted + options_.unauthenticated_grace)
      victim = oldest;
    if (victim != unauthenticated_.end()) {
      if (auto c = victim->second.conn.lock()) {
        log("shedding " + c->peer() + ": it has not authenticated and " +
            (source_full ? std::to_string(from_source) + " connections from " + source.to_string()
                         : std::to_string(unauthenticated_.size()) + " connections") +
            " are waiting to (limit " + std::to_string(source_full ? source_cap : cap) + ")");
        c->close();
      }
      unauthenticated_.erase(victim);
      continue;
    }
    if (oldest != unauthenticated_.end())
      next_check = std::min(next_check, oldest->second.accepted + options_.unauthenticated_grace);
    pause.expires_at(next_check);
    co_await pause.async_wait(nothrow);
  }
}

void controller::impl::log(const std::string& line) const {
  if (options_.log) std::cerr << "rocelab controller: " << line << "\n";
}

asio::awaitable<void> controller::impl::accept_loop() {
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
    boost::system::error_code no_peer;
    const auto source = socket.remote_endpoint(no_peer).address();
    co_await make_room(source);
    if (!acceptor_.is_open()) co_return;  // stopping: the held connection closes with its socket
    boost::system::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    auto conn = std::make_shared<connection>(connection::tls_stream(std::move(socket), tls_->native()));
    const std::uint64_t id = ++next_connection_;
    unauthenticated_.emplace(id, unauthenticated_connection{conn, std::chrono::steady_clock::now(), source});
    asio::co_spawn(io_, session(conn, id), asio::detached);
  }
}

asio::awaitable<void> controller::impl::session(std::shared_ptr<connection> conn, std::uint64_t id) {
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
  std::optional<unauthenticated_entry> pending;
  pending.emplace(*this, id);
  // One deadline from accept to hello. A connection that has sent nothing is the first
  // shed at a cap (make_room); once its first bytes came it is a handshake under way.
  const auto deadline = std::chrono::steady_clock::now() + options_.handshake_timeout;
  const auto left = [&] {
    return std::max(std::chrono::milliseconds(1), std::chrono::duration_cast<std::chrono::milliseconds>(
                                                      deadline - std::chrono::steady_clock::now()));
  };
  if (!co_await conn->wait_readable(left())) {
    ++rejected_;
    log("closed " + conn->peer() + ": nothing came within " + std::to_string(options_.handshake_timeout.count()) +
        " ms of its connecting (or it was shed)");
    co_return;
  }
  if (auto it = unauthenticated_.find(id); it != unauthenticated_.end()) it->second.spoke = true;
  // Nothing is read or written in the clear: until the handshake proved the token, the
  // peer sees only TLS alerts.
  if (auto st = co_await conn->handshake(asio::ssl::stream_base::server, left()); !st.ok()) {
    ++rejected_;
    log("rejected " + conn->peer() + ": " + st.message());
    co_return;
  }
  conn->share_read_budget(read_budget_);
  conn->start_writer();
  auto first = co_await conn->read(left(), max_hello_bytes);
  pending.reset();
  if (!first) {
    log("closed " + conn->peer() + ": " + first.error().message());
    co_return;
  }
  if (auto* w = std::get_if<register_worker>(&*first)) {
    co_await worker_session(conn, std::move(*w));
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

std::uint16_t controller::clock_port() const {
  // Set in open(), before the io thread starts, and never changed.
  return impl_->clock_service_.port();
}

std::uint16_t controller::port() const {
  boost::system::error_code ec;
  return impl_->acceptor_.local_endpoint(ec).port();
}

std::size_t controller::buffered_bytes() const noexcept { return impl_->read_budget_->held(); }

const std::string& controller::db_path() const noexcept { return impl_->options_.db_path; }

void controller::cancel_runs() noexcept { impl_->stopping_ = true; }

}  // namespace rocelab::controller
