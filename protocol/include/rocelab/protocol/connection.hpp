#pragma once
// One authenticated, framed connection (controller side or agent/client side): a TLS
// stream (security.hpp), frames read with a deadline and decoded by messages.hpp, and one
// writer coroutine that drains a queue, so any coroutine of the session can send without
// interleaving frames (Asio's chat_server pattern).
//
// A frame that fails to parse or decode, a read past its deadline, or a TLS error closes
// this connection only; the error names what was wrong. Nothing is read beyond the 8-byte
// header of an oversize frame.
// Memory per connection is bounded: one frame being read (at most the read's body limit,
// max_body_bytes unless the caller asks for less, held as its bytes arrive: a declared
// body is never allocated before its bytes come, read_chunk_bytes at a time) and the
// frames queued for the writer (at most max_queued_bytes; a send beyond it closes the
// connection: its peer is not reading). Connections sharing a read_budget
// (read_budget.hpp) also cap what they hold together: a body beyond what the budget has
// waits for it within the read's deadline, and fails the read (resource_exhausted) past it.
//
// Threading: all members run on the connection's executor (one io_context thread).
// Ownership: shared_ptr, kept alive by the coroutines using it.

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>

#include "rocelab/common/result.hpp"
#include "rocelab/protocol/messages.hpp"
#include "rocelab/protocol/read_budget.hpp"

namespace rocelab::protocol {

namespace asio = boost::asio;

class connection : public std::enable_shared_from_this<connection> {
 public:
  static constexpr std::size_t max_queued_bytes = 64u << 20;
  static constexpr std::size_t read_chunk_bytes = 64u << 10;

  using tls_stream = asio::ssl::stream<asio::ip::tcp::socket>;

  explicit connection(tls_stream stream);
  ~connection();

  // Waits until the peer has sent something (its first bytes: a TLS ClientHello) or
  // `timeout` passed; false (and the connection closed) when nothing came or it closed.
  asio::awaitable<bool> wait_readable(std::chrono::milliseconds timeout);
  // Bytes the peer sent that nobody has read yet (the kernel's receive buffer); 0 on error.
  [[nodiscard]] std::size_t unread_bytes() const noexcept;
  // TLS handshake as server or client; on failure the connection is closed.
  asio::awaitable<status> handshake(asio::ssl::stream_base::handshake_type type, std::chrono::milliseconds timeout);
  // The next message, or why there is none (closed, deadline, malformed, a body over
  // `max_body`, refused from the header); any error closes the connection.
  asio::awaitable<result<message>> read(std::chrono::milliseconds timeout, std::uint32_t max_body = max_body_bytes);
  // Queues a message for the writer; false (and nothing queued) when closed or when the
  // message cannot be encoded; false and the connection closed when the queue would pass
  // max_queued_bytes.
  bool send(const message& m);
  // As send(), but the frame goes out ahead of every frame queued by send() (after the one
  // being written, and after earlier send_first frames): clock probes and their replies,
  // whose timestamps would otherwise include the queue's wait.
  bool send_first(const message& m);
  // Reads from now on hold their frames' bytes against `budget` (shared by the connections
  // it caps; call on the connection's executor, between reads).
  void share_read_budget(std::shared_ptr<read_budget> budget) { budget_ = std::move(budget); }
  // Starts the writer coroutine (call once, after the handshake).
  void start_writer();
  // Closes the socket (idempotent); pending reads and the writer end.
  void close();

  // Safe from any thread: a client's run thread polls it to notice the client has gone.
  [[nodiscard]] bool is_open() const noexcept { return open_.load(std::memory_order_acquire); }
  [[nodiscard]] const std::string& peer() const noexcept { return peer_; }
  // The peer's address and port as connected (unspecified when it could not be read).
  [[nodiscard]] const asio::ip::tcp::endpoint& remote() const noexcept { return remote_; }
  [[nodiscard]] std::size_t queued_frames() const noexcept { return queue_.size() + first_.size(); }

 private:
  asio::awaitable<void> writer();
  bool enqueue(const message& m, std::deque<std::vector<std::uint8_t>>& into);

  tls_stream stream_;
  asio::steady_timer wake_;
  std::deque<std::vector<std::uint8_t>> queue_;
  std::deque<std::vector<std::uint8_t>> first_;  // send_first frames, written before queue_'s
  std::size_t queued_bytes_ = 0;
  std::string peer_;
  asio::ip::tcp::endpoint remote_;
  std::shared_ptr<read_budget> budget_;
  std::atomic<bool> open_{true};
  bool writer_started_ = false;
};

// Connects to "host:port", runs the TLS handshake, and returns the connection.
asio::awaitable<result<std::shared_ptr<connection>>> connect_to(asio::any_io_executor executor,
                                                                asio::ssl::context& tls, std::string address,
                                                                std::chrono::milliseconds timeout);

// "host:port" -> (host, port); "[v6]:port" accepted.
[[nodiscard]] result<std::pair<std::string, std::string>> split_address(const std::string& address);

}  // namespace rocelab::protocol
