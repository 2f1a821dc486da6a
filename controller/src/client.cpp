#include "rocelab/controller/client.hpp"

#include <optional>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "rocelab/controller/connection.hpp"
#include "rocelab/controller/security.hpp"

namespace rocelab::controller {
namespace {

constexpr std::chrono::seconds client_heartbeat{5};

asio::awaitable<void> heartbeats(std::shared_ptr<connection> conn) {
  asio::steady_timer t(co_await asio::this_coro::executor);
  for (std::uint64_t seq = 1; conn->is_open(); ++seq) {
    t.expires_after(client_heartbeat);
    co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
    conn->send(heartbeat{seq});
  }
}

// Closes the connection once the caller asks to cancel; `cancelled` tells the waiting
// loop why its read ended.
asio::awaitable<void> cancel_watch(std::shared_ptr<connection> conn, const submit_options& o, bool& cancelled) {
  asio::steady_timer t(co_await asio::this_coro::executor);
  while (conn->is_open()) {
    t.expires_after(o.cancel_poll);
    co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
    if (conn->is_open() && o.cancel_requested()) {
      cancelled = true;
      conn->close();
    }
  }
}

asio::awaitable<void> submit(asio::io_context& io, asio::ssl::context& tls, const submit_options& o,
                             submit_run request, std::optional<result<run_finished>>& out) {
  auto ex = co_await asio::this_coro::executor;
  auto conn = co_await connect_to(ex, tls, o.controller, o.connect_timeout);
  if (!conn) {
    out = conn.error();
    co_return;
  }
  auto c = *conn;
  c->start_writer();
  c->send(hello{peer_role::client, "rocelab-run", {}, 0});
  auto w = co_await c->read(o.connect_timeout);
  if (!w || !std::holds_alternative<welcome>(*w)) {
    out = w ? status(error_code::io_error, "controller " + o.controller + " did not welcome us") : w.error();
    c->close();
    co_return;
  }
  asio::co_spawn(ex, heartbeats(c), asio::detached);
  bool cancelled = false;
  if (o.cancel_requested) asio::co_spawn(ex, cancel_watch(c, o, cancelled), asio::detached);
  c->send(request);
  const auto deadline = std::chrono::steady_clock::now() + o.run_timeout;
  while (c->is_open() && std::chrono::steady_clock::now() < deadline) {
    auto m = co_await c->read(std::chrono::duration_cast<std::chrono::milliseconds>(client_heartbeat * 4));
    if (!m) {
      out = cancelled ? status(error_code::cancelled, "cancelled while waiting for the run on " + o.controller +
                                                          "; the controller stores it as interrupted")
                      : m.error().with_context("waiting for the run");
      break;
    }
    if (auto* f = std::get_if<run_finished>(&*m); f && f->request == request.request) {
      out = std::move(*f);
      break;
    }
    if (auto* e = std::get_if<error_message>(&*m)) {
      out = status(error_code::invalid_argument, "controller: " + e->message);
      break;
    }
  }
  if (!out) out = status(error_code::cancelled, "the run did not finish within the client's timeout");
  c->close();
  io.stop();  // the heartbeat coroutine may be mid-wait; nothing else is left to do
}

}  // namespace

result<run_finished> submit_spec(const submit_options& options, const std::string& spec_yaml,
                                 const std::string& source_name, const std::vector<std::string>& sets) {
  auto tls = tls_context::make(tls_role::client, options.token);
  if (!tls) return tls.error();
  asio::io_context io;
  std::optional<result<run_finished>> out;
  submit_run request{1, spec_yaml, source_name, sets};
  asio::co_spawn(io, submit(io, (*tls)->native(), options, std::move(request), out), asio::detached);
  io.run();
  if (!out) return status(error_code::internal, "submit ended without an answer");
  return std::move(*out);
}

}  // namespace rocelab::controller
