#include "rocelab/traffic/soft_nic/roce_port_claim.hpp"

#include <linux/filter.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <string>

namespace rocelab::traffic::soft_nic {

result<roce_port_claim> roce_port_claim::claim(std::uint16_t port) {
  const std::string where = "claiming UDP port " + std::to_string(port);
  unique_fd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return status::from_errno("socket").with_context(where);
  // Classic BPF "ret #0": every datagram is cut to zero bytes, i.e. dropped before it is
  // queued (sk_filter), so the socket never holds memory however many frames arrive.
  sock_filter drop_all[] = {BPF_STMT(BPF_RET | BPF_K, 0)};
  const sock_fprog prog{1, drop_all};
  if (::setsockopt(fd.get(), SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof prog) != 0)
    return status::from_errno("SO_ATTACH_FILTER").with_context(where);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0)
    return status::from_errno("bind").with_context(where);
  return roce_port_claim(std::move(fd));
}

}  // namespace rocelab::traffic::soft_nic
