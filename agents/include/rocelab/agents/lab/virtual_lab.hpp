#pragma once
// The virtual lab: N hosts and a soft switch on one machine.
//
//   netns rl-<name>-h<i>  : eth0, 198.18.0.<i>/24, MAC 02:52:4c:00:00:<i>, static ARP
//                           entries for every other host; soft NIC processes run here.
//   netns rl-<name>-sw    : p<i> (the switch side of host i's veth), mirror; the soft
//                           switch process (`rocelab switch --lab <name>`).
//   netns rl-<name>-cap   : eth0 (198.18.1.1/24), the mirror port's peer; captures run here.
// Addresses come from 198.18.0.0/15 (RFC 2544 benchmarking space) and live only inside the
// lab's namespaces, so labs of different names do not collide. IPv6 is off in every
// namespace (no router solicitations or DAD in captures); host eth0s have checksum and
// segmentation offloads off, so frames the host kernel sends are complete on the wire
// (the switch forwards bytes; it cannot finish a partial checksum).
//
// State: <state_root>/<name>/lab.json (lab_state below), the switch's control socket
// switch.sock and its log switch.log beside it. Readers: the soft NICs (which namespace,
// which MAC/IP), the switch driver (control socket), `rocelab lab status`.
//
// Tooling: iproute2 (`ip`), run by fork/exec with an argv (no shell). Chosen over
// libnl/libmnl because every step is one command an operator can replay and its error
// text is iproute2's own; the cost is one exec per step (lab up for 8 hosts well under a
// second).
//
// Errors: lab_up undoes whatever it made when a step fails (by calling lab_down), and
// says which step failed. lab_down is idempotent and also works after a crash: it finds
// namespaces by name prefix even when the state file is gone, stops every process left in
// them (the switch, soft NICs) and deletes them, which deletes the veths.
// All of it needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN).

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rocelab/common/result.hpp"

namespace rocelab::agents::lab {

inline constexpr const char* default_state_root = "/run/rocelab";

struct lab_options {
  std::string name = "lab";  // [a-z0-9]{1,8}
  int hosts = 2;             // 1..64
  double link_gbps = 10;
  std::int64_t buffer_kb = 1024;
  int mtu = 4200;            // interface MTU: RoCE MTU 4096 + BTH/RETH/ICRC + UDP/IP
  std::string state_root = default_state_root;
  std::string rocelab_binary;  // the `rocelab` to run the switch with; empty: /proc/self/exe
  std::vector<std::string> switch_args;  // extra arguments for `rocelab switch`
  bool start_switch = true;
  // Non-empty: one `rocelab agent --controller <controller> --token-file <token_file>` per
  // host, started after the switch, in the machine's namespace (where the controller is
  // reachable), each putting its host's soft NIC into the host's namespace (--netns).
  // Their logs are agent-<host>.log in the state directory; lab down stops them.
  std::string controller;
  std::string token_file;
  std::chrono::milliseconds switch_ready_timeout{15000};
};

struct lab_host {
  std::string name;         // h1..hN
  std::string netns;        // rl-<lab>-h<i>
  std::string ifname;       // eth0
  std::string mac;
  std::string ipv4;         // without prefix
  int prefix_len = 24;
  std::string switch_port;  // p<i> in the switch namespace
  std::string switch_port_mac;
  int agent_pid = 0;        // its agent (lab up --controller); 0: none
  std::string agent_log;
};

struct lab_state {
  std::string name;
  std::string state_dir;
  double link_gbps = 0;
  std::int64_t buffer_bytes = 0;
  int mtu = 0;
  std::vector<lab_host> hosts;
  std::string switch_netns;
  std::string mirror_port;      // in the switch namespace
  std::string mirror_port_mac;
  std::string mirror_ipv4;      // ERSPAN source address
  std::string capture_netns;
  std::string capture_ifname;
  std::string capture_mac;
  std::string capture_ipv4;     // ERSPAN destination
  std::string control_socket;
  std::string switch_log;
  int switch_pid = 0;           // 0: not started
  std::string clock = "CLOCK_MONOTONIC";  // the timeline of the switch and the soft NICs
};

[[nodiscard]] nlohmann::json to_json(const lab_state& s);
[[nodiscard]] result<lab_state> lab_state_from_json(const nlohmann::json& j);
[[nodiscard]] std::string lab_state_path(const std::string& state_root, const std::string& name);
[[nodiscard]] result<lab_state> load_lab(const std::string& state_root, const std::string& name);
[[nodiscard]] status validate_lab_name(const std::string& name);

// Creates the lab and starts its switch; returns its state (also written to lab.json).
[[nodiscard]] result<lab_state> lab_up(const lab_options& options);
// Removes everything of lab `name`; succeeds when nothing was there.
[[nodiscard]] status lab_down(const std::string& name, const std::string& state_root = default_state_root);

// What exists of lab `name` now (for `rocelab lab status`): the state file, namespaces
// present, whether the switch process lives and answers.
struct lab_presence {
  std::string name;
  bool state_file = false;
  std::vector<std::string> namespaces;
  int switch_pid = 0;
  bool switch_alive = false;
  int agents_alive = 0;  // hosts' agents running
};
[[nodiscard]] lab_presence lab_inspect(const std::string& name, const std::string& state_root = default_state_root);
// Names of labs with a state file or a namespace.
[[nodiscard]] std::vector<std::string> list_labs(const std::string& state_root = default_state_root);

// Runs fn() on a thread that has joined network namespace `netns` (by name, under
// /run/netns) and waits for it. Sockets fn opens stay in that namespace after it returns,
// so a process can hold sockets in several namespaces at once.
[[nodiscard]] status in_netns(const std::string& netns, const std::function<status()>& fn);

// Runs a program (execvp, no shell), collecting its stderr into the error; at most
// `timeout`, then it is killed.
[[nodiscard]] status run_program(const std::vector<std::string>& args,
                                 std::chrono::milliseconds timeout = std::chrono::seconds(20));

}  // namespace rocelab::agents::lab
