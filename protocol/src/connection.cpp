#include "rocelab/protocol/connection.hpp"

#include <algorithm>
#include <array>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

namespace rocelab::protocol {

using namespace asio::experimental::awaitable_operators;
using asio::use_awaitable;

namespace {

constexpr auto nothrow = asio::as_tuple(use_awaitable);
// How often a read waiting for buffer space looks again.
constexpr std::chrono::milliseconds budget_wait_poll{2};

status net_error(std::string what, const boost::system::error_code& ec) {
  return {ec == asio::error::operation_aborted ? error_code::cancelled : error_code::io_error,
          std::move(what) + ": " + ec.message(), ec.value()};
}

}  // namespace

connection::connection(tls_stream stream) : stream_(std::move(stream)), wake_(stream_.get_executor()) {
  boost::system::error_code ec;
  const auto ep = stream_.lowest_layer().remote_endpoint(ec);
  peer_ = ec ? std::string("?") : ep.address().to_string() + ":" + std::to_string(ep.port());
  if (!ec) remote_ = ep;
  wake_.expires_at(asio::steady_timer::time_point::max());
}

connection::~connection() = default;

void connection::close() {
  if (!open_.exchange(false, std::memory_order_acq_rel)) return;
  boost::system::error_code ec;
  // No TLS close_notify exchange: it would need the peer's cooperation and a deadline of
  // its own; shutting the TCP socket is enough to end both directions.
  stream_.lowest_layer().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  stream_.lowest_layer().close(ec);
  wake_.cancel();
}

asio::awaitable<bool> connection::wait_readable(std::chrono::milliseconds timeout) {
  asio::steady_timer deadline(stream_.get_executor(), timeout);
  auto outcome = co_await (stream_.lowest_layer().async_wait(asio::socket_base::wait_read, nothrow) ||
                           deadline.async_wait(nothrow));
  if (outcome.index() == 0 && !std::get<0>(std::get<0>(outcome))) co_return true;
  close();
  co_return false;
}

std::size_t connection::unread_bytes() const noexcept {
  boost::system::error_code ec;
  const std::size_t n = stream_.lowest_layer().available(ec);
  return ec ? 0 : n;
}

asio::awaitable<status> connection::handshake(asio::ssl::stream_base::handshake_type type,
                                              std::chrono::milliseconds timeout) {
  asio::steady_timer deadline(stream_.get_executor(), timeout);
  auto outcome = co_await (stream_.async_handshake(type, nothrow) || deadline.async_wait(nothrow));
  if (outcome.index() == 1) {
    close();
    co_return status(error_code::cancelled, "TLS handshake with " + peer_ + ": no answer within " +
                                                std::to_string(timeout.count()) + " ms");
  }
  auto [ec] = std::get<0>(outcome);
  if (ec) {
    close();
    co_return net_error("TLS handshake with " + peer_ + " (wrong token, or not a rocelab peer?)", ec);
  }
  co_return status::success();
}

asio::awaitable<result<message>> connection::read(std::chrono::milliseconds timeout, std::uint32_t max_body) {
  if (!open_) co_return status(error_code::cancelled, "connection to " + peer_ + " is closed");
  asio::steady_timer deadline(stream_.get_executor(), timeout);
  std::array<std::uint8_t, frame_header_bytes> header{};
  auto got = co_await (asio::async_read(stream_, asio::buffer(header), nothrow) || deadline.async_wait(nothrow));
  if (got.index() == 1) {
    close();
    co_return status(error_code::cancelled, "reading from " + peer_ + ": nothing within " +
                                                std::to_string(timeout.count()) + " ms");
  }
  if (auto [ec, n] = std::get<0>(got); ec) {
    close();
    co_return net_error("reading from " + peer_, ec);
  }
  auto h = parse_header(header);
  if (!h) {
    close();
    co_return h.error().with_context("from " + peer_);
  }
  if (h->body_bytes > max_body) {
    close();
    co_return status(error_code::resource_exhausted, "from " + peer_ + ": " + to_string(h->type) + " of " +
                                                         std::to_string(h->body_bytes) + " bytes exceeds the limit of " +
                                                         std::to_string(max_body) + " here");
  }
  // The body as it arrives, a chunk at a time: a peer that declares 4 MiB and sends one
  // byte holds one chunk, not 4 MiB. Bytes past the frame's free allowance come from the
  // shared budget, waiting for it within the deadline.
  struct held_bytes {
    std::shared_ptr<read_budget> budget;
    std::size_t n = 0;
    ~held_bytes() {
      if (budget) budget->give_back(n);
    }
  } held{budget_};
  asio::steady_timer retry(stream_.get_executor());
  std::vector<std::uint8_t> body;
  while (body.size() < h->body_bytes) {
    const std::size_t chunk = std::min<std::size_t>(read_chunk_bytes, h->body_bytes - body.size());
    if (budget_ && held.n + chunk <= read_budget::free_bytes_per_frame) {
      budget_->take_free(chunk);
      held.n += chunk;
    } else if (budget_) {
      bool expired = false, taken = false;
      while (open_ && !expired && !(taken = budget_->try_take(chunk))) {
        retry.expires_after(budget_wait_poll);
        expired = (co_await (retry.async_wait(nothrow) || deadline.async_wait(nothrow))).index() == 1;
      }
      if (!taken && !expired) co_return status(error_code::cancelled, "connection to " + peer_ + " is closed");
      if (!taken) {
        close();
        co_return status(error_code::resource_exhausted,
                         "reading from " + peer_ + ": body of " + to_string(h->type) + " (" +
                             std::to_string(h->body_bytes) + " bytes) waited " + std::to_string(timeout.count()) +
                             " ms for buffer space (" + std::to_string(budget_->limit()) +
                             " bytes shared by the connections, all held)");
      }
      held.n += chunk;
    }
    const std::size_t at = body.size();
    body.resize(at + chunk);
    auto got_body =
        co_await (asio::async_read(stream_, asio::buffer(body.data() + at, chunk), nothrow) || deadline.async_wait(nothrow));
    if (got_body.index() == 1) {
      close();
      co_return status(error_code::cancelled, "reading from " + peer_ + ": body of " + to_string(h->type) +
                                                  " not complete within " + std::to_string(timeout.count()) + " ms");
    }
    if (auto [ec, n] = std::get<0>(got_body); ec) {
      close();
      co_return net_error("reading from " + peer_, ec);
    }
  }
  auto m = decode_body(h->type, body);
  if (!m) {
    close();
    co_return m.error().with_context("from " + peer_);
  }
  co_return std::move(*m);
}

bool connection::send(const message& m) { return enqueue(m, queue_); }

bool connection::send_first(const message& m) { return enqueue(m, first_); }

bool connection::enqueue(const message& m, std::deque<std::vector<std::uint8_t>>& into) {
  if (!open_) return false;
  auto frame = encode(m);
  if (!frame) return false;
  if (queued_bytes_ + frame->size() > max_queued_bytes) {
    close();
    return false;
  }
  queued_bytes_ += frame->size();
  into.push_back(std::move(*frame));
  wake_.cancel_one();
  return true;
}

void connection::start_writer() {
  if (writer_started_) return;
  writer_started_ = true;
  asio::co_spawn(stream_.get_executor(), [self = shared_from_this()] { return self->writer(); }, asio::detached);
}

asio::awaitable<void> connection::writer() {
  while (open_) {
    if (queue_.empty() && first_.empty()) {
      co_await wake_.async_wait(nothrow);
      continue;
    }
    // A frame stays at the front of its queue until written: the buffer must live across
    // the write (a deque's push_back keeps references to its elements valid).
    auto& from = first_.empty() ? queue_ : first_;
    auto [ec, n] = co_await asio::async_write(stream_, asio::buffer(from.front()), nothrow);
    if (ec) {
      close();
      co_return;
    }
    queued_bytes_ -= from.front().size();
    from.pop_front();
  }
}

result<std::pair<std::string, std::string>> split_address(const std::string& address) {
  std::string host, port;
  if (!address.empty() && address.front() == '[') {
    const auto close_bracket = address.find(']');
    if (close_bracket == std::string::npos || close_bracket + 1 >= address.size() || address[close_bracket + 1] != ':')
      return status(error_code::invalid_argument, "address '" + address + "': expected [v6]:port");
    host = address.substr(1, close_bracket - 1);
    port = address.substr(close_bracket + 2);
  } else {
    const auto colon = address.rfind(':');
    if (colon == std::string::npos)
      return status(error_code::invalid_argument, "address '" + address + "': expected host:port");
    host = address.substr(0, colon);
    port = address.substr(colon + 1);
  }
  if (host.empty() || port.empty() || port.find_first_not_of("0123456789") != std::string::npos)
    return status(error_code::invalid_argument, "address '" + address + "': expected host:port");
  return std::pair{host, port};
}

asio::awaitable<result<std::shared_ptr<connection>>> connect_to(asio::any_io_executor executor,
                                                                asio::ssl::context& tls, std::string address,
                                                                std::chrono::milliseconds timeout) {
  auto parts = split_address(address);
  if (!parts) co_return parts.error();
  asio::ip::tcp::resolver resolver(executor);
  auto [rec, endpoints] = co_await resolver.async_resolve(parts->first, parts->second, nothrow);
  if (rec) co_return net_error("resolving " + address, rec);
  connection::tls_stream stream(executor, tls);
  asio::steady_timer deadline(executor, timeout);
  auto got = co_await (asio::async_connect(stream.lowest_layer(), endpoints, nothrow) || deadline.async_wait(nothrow));
  if (got.index() == 1) co_return status(error_code::cancelled, "connecting to " + address + ": timed out");
  if (auto [ec, ep] = std::get<0>(got); ec) co_return net_error("connecting to " + address, ec);
  boost::system::error_code ignored;
  stream.lowest_layer().set_option(asio::ip::tcp::no_delay(true), ignored);
  auto conn = std::make_shared<connection>(std::move(stream));
  if (auto st = co_await conn->handshake(asio::ssl::stream_base::client, timeout); !st.ok())
    co_return st.with_context("connecting to " + address);
  co_return conn;
}

}  // namespace rocelab::protocol
