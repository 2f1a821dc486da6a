#pragma once
// The NIC process's ends of its channel (nic_channel.hpp): command lines read from a
// non-blocking descriptor, event lines written whole to another.
#include <string>

#include "rocelab/traffic/soft_nic/nic_channel.hpp"

namespace rocelab::traffic::soft_nic {

// Newline-terminated lines from a non-blocking descriptor the caller owns.
class line_reader {
 public:
  explicit line_reader(int fd) : fd_(fd) {}
  // Reads what the descriptor has; false at EOF or on an error.
  bool fill();
  // The next whole line (without its newline) into `line`; false when none is complete.
  bool next(std::string& line);

 private:
  int fd_;
  std::string pending_;
};

// Writes `e` as one whole line to `fd`. The orchestrator reads a pipe, so a short write
// only happens when the pipe is full, and then this waits for room (bounded by the
// orchestrator reading); a reader gone away is not reported (nothing to tell).
void write_event(int fd, const nic_event& e);

}  // namespace rocelab::traffic::soft_nic
