#pragma once
// Runs a program with an argv vector (never a shell string), feeds it stdin and collects
// stdout, stderr and the exit status, with a deadline after which it is killed. The SONiC
// driver runs ssh through it.

#include <chrono>
#include <string>
#include <vector>

#include "rocelab/common/result.hpp"

namespace rocelab::fabric::drivers {

struct process_output {
  int exit_code = -1;  // -1: killed by a signal
  std::string out;
  std::string err;
};

// argv[0] is looked up on PATH. Errors: the program could not be started, or the
// deadline passed (cancelled; the process is killed). A non-zero exit is not an error
// here: the caller decides, with the output in hand.
[[nodiscard]] result<process_output> run_process(const std::vector<std::string>& argv, const std::string& input,
                                                 std::chrono::milliseconds timeout,
                                                 std::size_t max_output_bytes = 64u << 20);

}  // namespace rocelab::fabric::drivers
