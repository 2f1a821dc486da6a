#pragma once
// The NIC process's command handling: the command lines it has read, decoded
// (nic_channel.hpp) and acted on in arrival order.
#include "nic_post_scheduler.hpp"
#include "nic_process_io.hpp"

namespace rocelab::traffic::soft_nic {

// Every whole line `in` holds: posts go to `posts`; a line that is no command goes to
// `out_fd` as an error event naming the line and what is wrong, and the NIC runs on. true
// at a stop command (the lines after it stay unread).
[[nodiscard]] bool handle_commands(line_reader& in, post_scheduler& posts, int out_fd);

}  // namespace rocelab::traffic::soft_nic
