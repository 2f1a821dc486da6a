#pragma once
// Abuse of a running controller by token holders and by clients without the token, each
// printing what it cost the controller (its /proc/PID) and whether real runs were still
// served (controller_soak_client --abuse KIND).
//   names   N distinct worker or agent names register and leave: the controller's RSS per
//           name, and (agents) how long a remote run takes afterwards
//   pieces  a worker answers a trial with N unfinished pieces (done=false) of 2,048 flows:
//           RSS while held and once the worker left; how the run it held ended
//   bodies  N token holders each declare a 4 MiB frame body and send one byte: RSS
//   idle    R idle TCP connections a second (no byte sent) for S seconds while remote runs
//           go back to back: runs completed and failed

#include <string>

namespace rocelab::bench {

struct abuse_target {
  std::string controller;  // 127.0.0.1:PORT
  std::string token;
  long pid = 0;  // the controller's
};

// The remote run every mode uses to see whether the controller still serves (3 hosts,
// 2 x 16 KiB incast on the twin).
extern const char* const tiny_spec;

int abuse_names(const abuse_target& t, const std::string& role, int count);
int abuse_pieces(const abuse_target& t, int pieces);
int abuse_bodies(const abuse_target& t, int holders);
int abuse_idle(const abuse_target& t, int per_second, int seconds);

}  // namespace rocelab::bench
