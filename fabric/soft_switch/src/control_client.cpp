#include "rocelab/fabric/soft_switch/control_client.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace rocelab::fabric::soft_switch {
namespace {
using clock_type = std::chrono::steady_clock;

int remaining_ms(clock_type::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now()).count();
  return left < 0 ? 0 : static_cast<int>(left);
}
}  // namespace

result<control_client> control_client::connect(const std::string& path, std::chrono::milliseconds timeout) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return status(error_code::invalid_argument, "socket path too long: " + path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const auto deadline = clock_type::now() + timeout;
  for (;;) {
    unique_fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd.valid()) return status::from_errno("socket(AF_UNIX)");
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) return control_client(std::move(fd));
    // The switch may still be starting: retry until the deadline.
    if ((errno != ENOENT && errno != ECONNREFUSED && errno != EAGAIN) || clock_type::now() >= deadline)
      return status::from_errno("connecting to " + path);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

result<std::string> control_client::call_line(std::string_view line, std::chrono::milliseconds timeout) {
  const auto deadline = clock_type::now() + timeout;
  std::string out(line);
  out += '\n';
  std::size_t sent = 0;
  while (sent < out.size()) {
    pollfd p{fd_.get(), POLLOUT, 0};
    if (::poll(&p, 1, remaining_ms(deadline)) <= 0) return status(error_code::io_error, "control request: timed out");
    const ssize_t n = ::send(fd_.get(), out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EINTR && errno != EAGAIN) return status::from_errno("control request");
    if (n > 0) sent += static_cast<std::size_t>(n);
  }
  for (;;) {
    if (const auto nl = pending_.find('\n'); nl != std::string::npos) {
      std::string response = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      return response;
    }
    pollfd p{fd_.get(), POLLIN, 0};
    if (::poll(&p, 1, remaining_ms(deadline)) <= 0) return status(error_code::io_error, "control response: timed out");
    char buf[65536];
    const ssize_t n = ::recv(fd_.get(), buf, sizeof buf, 0);
    if (n == 0) return status(error_code::io_error, "control response: the switch closed the connection");
    if (n < 0 && errno != EINTR && errno != EAGAIN) return status::from_errno("control response");
    if (n > 0) pending_.append(buf, static_cast<std::size_t>(n));
  }
}

result<nlohmann::json> control_client::call(const nlohmann::json& request, std::chrono::milliseconds timeout) {
  auto line = call_line(request.dump(), timeout);
  if (!line) return line.error();
  nlohmann::json j = nlohmann::json::parse(*line, nullptr, false);
  if (j.is_discarded()) return status(error_code::malformed_input, "control response is not JSON: " + *line);
  return j;
}

}  // namespace rocelab::fabric::soft_switch
