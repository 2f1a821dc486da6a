#pragma once
// For a forked child between fork and exec. Sockets and pipes that libraries opened
// without O_CLOEXEC (Boost.Asio's TCP sockets among them) would otherwise live on in every
// program rocelab starts: a capture or a soft NIC started by a controller would hold its
// clients' and agents' connections open after the controller died, and nobody would see
// the connection close.

#include <unistd.h>

namespace rocelab {

// Closes every descriptor above stderr. Async-signal-safe (one system call).
inline void close_inherited_fds() noexcept { (void)::close_range(3, ~0U, 0); }

}  // namespace rocelab
