#include "nic_commands.hpp"

#include <string>
#include <variant>

namespace rocelab::traffic::soft_nic {

bool handle_commands(line_reader& in, post_scheduler& posts, int out_fd) {
  std::string line;
  while (in.next(line)) {
    auto c = decode_command_line(line);
    if (!c) {
      write_event(out_fd, error_event{std::nullopt, c.error().message()});
      continue;
    }
    if (std::holds_alternative<stop_command>(*c)) return true;
    posts.take(std::get<post_command>(*c));
  }
  return false;
}

}  // namespace rocelab::traffic::soft_nic
