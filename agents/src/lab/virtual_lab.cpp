#include "rocelab/agents/lab/virtual_lab.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include "rocelab/common/bounded_file.hpp"
#include "rocelab/common/own_executable.hpp"
#include "rocelab/common/spawn.hpp"
#include "rocelab/common/unique_fd.hpp"

namespace rocelab::agents::lab {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* netns_dir = "/run/netns";

std::string ns_prefix(const std::string& name) { return "rlab-" + name + "-"; }

std::string mac_string(int kind, int index) {
  // Locally administered (02:...), "RL" in the OUI bytes, kind and index below.
  char s[18];
  std::snprintf(s, sizeof s, "02:52:4c:%02x:%02x:%02x", kind & 0xff, (index >> 8) & 0xff, index & 0xff);
  return s;
}

// Runs fn() on a thread that joined network namespace `netns`.
status in_netns_thread(const std::string& netns, const std::function<status()>& fn) {
  status out;
  std::thread worker([&] {
    const unique_fd fd(::open((std::string(netns_dir) + "/" + netns).c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) {
      out = status::from_errno("opening namespace " + netns);
      return;
    }
    if (::setns(fd.get(), CLONE_NEWNET) != 0) {
      out = status::from_errno("setns into " + netns);
      return;
    }
    out = fn();
  });
  worker.join();
  return out;
}

status write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  if (!f) return status::from_errno("opening " + path);
  f << text;
  f.flush();
  if (!f) return status::from_errno("writing " + path);
  return status::success();
}

// IPv6 off: the kernel then sends nothing of its own (RS, DAD, MLD) into the lab.
status quiet_namespace(const std::string& netns) {
  return in_netns_thread(netns, [] {
    for (const char* p : {"/proc/sys/net/ipv6/conf/all/disable_ipv6", "/proc/sys/net/ipv6/conf/default/disable_ipv6"})
      ROCELAB_RETURN_IF_ERROR(write_file(p, "1\n"));
    return status::success();
  });
}

// Checksum and segmentation offloads off (legacy ethtool ioctls; best effort, since a
// feature the driver lacks is already off).
status disable_offloads(const std::string& netns, const std::string& ifname) {
  return in_netns_thread(netns, [&] {
    unique_fd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!fd.valid()) return status::from_errno("socket for ethtool");
    for (const std::uint32_t cmd : {ETHTOOL_STXCSUM, ETHTOOL_STSO, ETHTOOL_SGSO, ETHTOOL_SGRO}) {
      ethtool_value v{};
      v.cmd = cmd;
      v.data = 0;
      ifreq ifr{};
      std::strncpy(ifr.ifr_name, ifname.c_str(), IFNAMSIZ - 1);
      ifr.ifr_data = reinterpret_cast<char*>(&v);
      (void)::ioctl(fd.get(), SIOCETHTOOL, &ifr);
    }
    return status::success();
  });
}

std::optional<std::pair<dev_t, ino_t>> ns_identity(const std::string& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return std::make_pair(st.st_dev, st.st_ino);
}

std::vector<std::string> lab_namespaces(const std::string& name) {
  std::vector<std::string> out;
  DIR* d = ::opendir(netns_dir);
  if (d == nullptr) return out;
  const std::string prefix = ns_prefix(name);
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n.rfind(prefix, 0) == 0) out.push_back(n);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// Processes whose network namespace is one of `namespaces`.
std::vector<pid_t> processes_in(const std::vector<std::string>& namespaces) {
  std::vector<std::pair<dev_t, ino_t>> ids;
  for (const auto& n : namespaces)
    if (auto id = ns_identity(std::string(netns_dir) + "/" + n)) ids.push_back(*id);
  std::vector<pid_t> out;
  if (ids.empty()) return out;
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return out;
  while (const dirent* e = ::readdir(d)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || pid <= 1 || pid == ::getpid()) continue;
    const auto id = ns_identity("/proc/" + std::string(e->d_name) + "/ns/net");
    if (id && std::find(ids.begin(), ids.end(), *id) != ids.end()) out.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(d);
  return out;
}

bool alive(pid_t pid) {
  if (pid <= 0) return false;
  (void)::waitpid(pid, nullptr, WNOHANG);  // reaps it if it is our child
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!f || !std::getline(f, line)) return false;
  const auto close = line.rfind(')');
  return close == std::string::npos || close + 2 >= line.size() || line[close + 2] != 'Z';
}

std::vector<std::string> command_line(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/cmdline");
  std::string cmd((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  std::string cur;
  for (char c : cmd) {
    if (c == '\0') {
      args.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return args;
}

// `rocelab <command> ... <flag> <value> ...`: judged by the command line, so a recycled
// pid is left alone.
bool runs_as(pid_t pid, const char* command, const char* flag, const std::string& value) {
  const auto args = command_line(pid);
  const auto cmd = std::find(args.begin(), args.end(), command);
  const auto f = std::find(args.begin(), args.end(), flag);
  return cmd != args.end() && f != args.end() && f + 1 != args.end() && *(f + 1) == value;
}

// The switch of lab `name`.
bool is_lab_switch(pid_t pid, const std::string& name) { return runs_as(pid, "switch", "--lab", name); }
// The agent of a host of a lab (it names the host's namespace).
bool is_lab_agent(pid_t pid, const std::string& netns) { return runs_as(pid, "agent", "--netns", netns); }

void stop_processes(std::vector<pid_t> pids) {
  for (pid_t p : pids) ::kill(p, SIGTERM);
  for (int i = 0; i < 150; ++i) {  // 3 s
    std::erase_if(pids, [](pid_t p) { return !alive(p); });
    if (pids.empty()) return;
    std::this_thread::sleep_for(20ms);
  }
  for (pid_t p : pids) ::kill(p, SIGKILL);
  for (int i = 0; i < 100 && !pids.empty(); ++i) {
    std::erase_if(pids, [](pid_t p) { return !alive(p); });
    std::this_thread::sleep_for(20ms);
  }
}

status ping_switch(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return {error_code::invalid_argument, "socket path too long"};
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  unique_fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return status::from_errno("socket");
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
    return status::from_errno("connect " + path);
  const char req[] = "{\"op\":\"ping\"}\n";
  if (::send(fd.get(), req, sizeof req - 1, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof req - 1))
    return status::from_errno("send");
  pollfd p{fd.get(), POLLIN, 0};
  if (::poll(&p, 1, 2000) <= 0) return {error_code::io_error, "no answer to ping"};
  char buf[256];
  const ssize_t n = ::recv(fd.get(), buf, sizeof buf - 1, 0);
  if (n <= 0) return {error_code::io_error, "no answer to ping"};
  buf[n] = '\0';
  if (std::strstr(buf, "\"ok\":true") == nullptr) return {error_code::io_error, std::string("ping answered ") + buf};
  return status::success();
}

// The last 2,000 bytes of a log, however long the log grew.
std::string tail_of(const std::string& path) {
  constexpr std::streamoff tail = 2000;
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return {};
  const std::streamoff size = f.tellg();
  f.seekg(size > tail ? size - tail : 0);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

std::string self_or(const std::string& binary) { return binary.empty() ? own_executable_path() : binary; }

// Starts `args` as a daemon (own session, output to the log, reparented to init by a
// double fork) in namespace `netns` (empty: this one) and returns its pid.
result<pid_t> start_daemon(std::vector<std::string> args, const std::string& netns, const std::string& log_path) {
  if (args.empty() || args[0].empty()) return status(error_code::invalid_argument, "no rocelab binary");
  const unique_fd log(::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640));
  if (!log.valid()) return status::from_errno("opening " + log_path);
  const unique_fd devnull(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  spawn_options daemon;
  daemon.argv = std::move(args);
  daemon.netns = netns;
  daemon.stdin_fd = devnull.get();
  daemon.stdout_fd = log.get();
  daemon.stderr_fd = log.get();
  daemon.detach = true;
  return spawn(daemon);
}

// `rocelab switch --lab <name>` in the switch namespace.
result<pid_t> start_switch(const lab_options& o, const lab_state& s) {
  std::vector<std::string> args = {self_or(o.rocelab_binary), "switch", "--lab", s.name, "--state-root", o.state_root};
  args.insert(args.end(), o.switch_args.begin(), o.switch_args.end());
  return start_daemon(std::move(args), s.switch_netns, s.switch_log);
}

// One `rocelab agent` per host, in this namespace (where the controller is reachable),
// each running its host's soft NIC in the host's namespace (--netns).
status start_agents(const lab_options& o, lab_state& s) {
  for (auto& h : s.hosts) {
    h.agent_log = s.state_dir + "/agent-" + h.name + ".log";
    std::vector<std::string> args = {self_or(o.rocelab_binary), "agent", "--controller", o.controller,
                                     "--name", h.name, "--token-file", o.token_file, "--netns", h.netns,
                                     "--log-dir", s.state_dir};
    auto pid = start_daemon(std::move(args), "", h.agent_log);
    if (!pid) return pid.error().with_context("starting the agent of " + h.name);
    h.agent_pid = *pid;
  }
  return status::success();
}

}  // namespace

status run_program(const std::vector<std::string>& args, std::chrono::milliseconds timeout) {
  std::string shown;
  for (const auto& a : args) shown += (shown.empty() ? "" : " ") + a;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return status::from_errno("pipe");
  unique_fd rd(fds[0]), wr(fds[1]);
  spawn_options child;
  child.argv = args;
  child.search_path = true;
  child.stdout_fd = wr.get();
  child.stderr_fd = wr.get();
  auto spawned = spawn(child);
  if (!spawned) return spawned.error();
  const pid_t pid = *spawned;
  wr.reset();
  std::string output;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(pid, SIGKILL);
      (void)::waitpid(pid, nullptr, 0);
      return {error_code::io_error, shown + ": timed out"};
    }
    pollfd p{rd.get(), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(rd.get(), buf, sizeof buf);
    if (n <= 0) break;
    if (output.size() < 8192) output.append(buf, static_cast<std::size_t>(n));
  }
  int ws = 0;
  (void)::waitpid(pid, &ws, 0);
  if (WIFEXITED(ws) && WEXITSTATUS(ws) == 0) return status::success();
  while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) output.pop_back();
  return {error_code::io_error, shown + ": " + (output.empty() ? "exit status " + std::to_string(WEXITSTATUS(ws)) : output)};
}

status validate_lab_name(const std::string& name) {
  if (name.empty() || name.size() > 8 ||
      !std::all_of(name.begin(), name.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }))
    return {error_code::invalid_argument, "name: 1..8 characters from a-z and 0-9, not '" + name + "'"};
  return status::success();
}

std::string lab_state_path(const std::string& root, const std::string& name) { return root + "/" + name + "/lab.json"; }

json to_json(const lab_state& s) {
  json hosts = json::array();
  for (const auto& h : s.hosts)
    hosts.push_back({{"name", h.name}, {"netns", h.netns}, {"ifname", h.ifname}, {"mac", h.mac}, {"ipv4", h.ipv4},
                     {"prefix_len", h.prefix_len}, {"switch_port", h.switch_port}, {"switch_port_mac", h.switch_port_mac},
                     {"agent_pid", h.agent_pid}, {"agent_log", h.agent_log}});
  return {{"version", 1},
          {"name", s.name},
          {"state_dir", s.state_dir},
          {"link_gbps", s.link_gbps},
          {"buffer_bytes", s.buffer_bytes},
          {"mtu", s.mtu},
          {"hosts", hosts},
          {"switch", {{"netns", s.switch_netns}, {"control_socket", s.control_socket}, {"log", s.switch_log},
                      {"pid", s.switch_pid}, {"mirror_port", s.mirror_port}, {"mirror_port_mac", s.mirror_port_mac},
                      {"mirror_ipv4", s.mirror_ipv4}}},
          {"capture", {{"netns", s.capture_netns}, {"ifname", s.capture_ifname}, {"mac", s.capture_mac},
                       {"ipv4", s.capture_ipv4}}},
          {"clock", s.clock}};
}

result<lab_state> lab_state_from_json(const json& j) {
  try {
    lab_state s;
    s.name = j.at("name").get<std::string>();
    s.state_dir = j.at("state_dir").get<std::string>();
    s.link_gbps = j.at("link_gbps").get<double>();
    s.buffer_bytes = j.at("buffer_bytes").get<std::int64_t>();
    s.mtu = j.at("mtu").get<int>();
    for (const auto& h : j.at("hosts"))
      s.hosts.push_back({h.at("name"), h.at("netns"), h.at("ifname"), h.at("mac"), h.at("ipv4"),
                         h.at("prefix_len").get<int>(), h.at("switch_port"), h.at("switch_port_mac"),
                         h.value("agent_pid", 0), h.value("agent_log", std::string())});
    const auto& sw = j.at("switch");
    s.switch_netns = sw.at("netns");
    s.control_socket = sw.at("control_socket");
    s.switch_log = sw.at("log");
    s.switch_pid = sw.at("pid").get<int>();
    s.mirror_port = sw.at("mirror_port");
    s.mirror_port_mac = sw.at("mirror_port_mac");
    s.mirror_ipv4 = sw.at("mirror_ipv4");
    const auto& c = j.at("capture");
    s.capture_netns = c.at("netns");
    s.capture_ifname = c.at("ifname");
    s.capture_mac = c.at("mac");
    s.capture_ipv4 = c.at("ipv4");
    s.clock = j.value("clock", "CLOCK_MONOTONIC");
    return s;
  } catch (const json::exception& e) {
    return status(error_code::malformed_input, std::string("lab state: ") + e.what());
  }
}

result<lab_state> load_lab(const std::string& root, const std::string& name) {
  const std::string path = lab_state_path(root, name);
  auto text = read_bounded_file(path, max_state_file_bytes, "lab state");
  if (!text) {
    if (text.error().code() == error_code::not_found)
      return status(error_code::not_found, "no lab '" + name + "' (" + path + ")");
    return std::move(text).error();
  }
  json j = json::parse(*text, nullptr, false);
  if (j.is_discarded()) return status(error_code::malformed_input, path + ": not JSON");
  return lab_state_from_json(j).with_context(path);
}

namespace {
status write_state(const lab_state& s) {
  const std::string path = s.state_dir + "/lab.json";
  const std::string tmp = path + ".tmp";
  ROCELAB_RETURN_IF_ERROR(write_file(tmp, to_json(s).dump(2) + "\n"));
  if (::rename(tmp.c_str(), path.c_str()) != 0) return status::from_errno("renaming " + tmp);
  return status::success();
}

status build(const lab_options& o, lab_state& s) {
  const auto ip = [](const std::string& netns, std::vector<std::string> args) {
    args.insert(args.begin(), {"ip", "-n", netns});
    return run_program(args);
  };
  const std::string mtu = std::to_string(o.mtu);
  for (const std::string& ns : [&] {
         std::vector<std::string> all = {s.switch_netns, s.capture_netns};
         for (const auto& h : s.hosts) all.push_back(h.netns);
         return all;
       }()) {
    ROCELAB_RETURN_IF_ERROR(run_program({"ip", "netns", "add", ns}));
    ROCELAB_RETURN_IF_ERROR(quiet_namespace(ns));
    ROCELAB_RETURN_IF_ERROR(ip(ns, {"link", "set", "lo", "up"}));
  }
  for (const auto& h : s.hosts) {
    ROCELAB_RETURN_IF_ERROR(ip(s.switch_netns, {"link", "add", h.switch_port, "address", h.switch_port_mac, "mtu", mtu,
                                                "type", "veth", "peer", "name", h.ifname, "address", h.mac, "mtu", mtu,
                                                "netns", h.netns}));
    ROCELAB_RETURN_IF_ERROR(disable_offloads(h.netns, h.ifname));
    ROCELAB_RETURN_IF_ERROR(ip(h.netns, {"addr", "add", h.ipv4 + "/" + std::to_string(h.prefix_len), "dev", h.ifname}));
    ROCELAB_RETURN_IF_ERROR(ip(h.netns, {"link", "set", h.ifname, "up"}));
    ROCELAB_RETURN_IF_ERROR(ip(s.switch_netns, {"link", "set", h.switch_port, "up"}));
    for (const auto& other : s.hosts)
      if (other.name != h.name)
        ROCELAB_RETURN_IF_ERROR(ip(h.netns, {"neigh", "replace", other.ipv4, "lladdr", other.mac, "dev", h.ifname,
                                             "nud", "permanent"}));
  }
  // The mirror link is jumbo: an ERSPAN copy of a full-size frame is ~50 bytes longer.
  ROCELAB_RETURN_IF_ERROR(ip(s.switch_netns, {"link", "add", s.mirror_port, "address", s.mirror_port_mac, "mtu", "9216",
                                              "type", "veth", "peer", "name", s.capture_ifname, "address", s.capture_mac,
                                              "mtu", "9216", "netns", s.capture_netns}));
  ROCELAB_RETURN_IF_ERROR(ip(s.capture_netns, {"addr", "add", s.capture_ipv4 + "/24", "dev", s.capture_ifname}));
  // ERSPAN copies come to the capture host's address; its kernel, which has no GRE
  // tunnel for them, would answer the mirror (an ARP request, then an ICMP error), and
  // the capture would hold frames the switch never mirrored. A collector says nothing
  // back: anything the capture host sends toward the mirror is dropped before it leaves.
  ROCELAB_RETURN_IF_ERROR(ip(s.capture_netns, {"route", "add", "blackhole", s.mirror_ipv4 + "/32"}));
  ROCELAB_RETURN_IF_ERROR(ip(s.capture_netns, {"link", "set", s.capture_ifname, "up"}));
  ROCELAB_RETURN_IF_ERROR(ip(s.switch_netns, {"link", "set", s.mirror_port, "up"}));
  return status::success();
}
}  // namespace

result<lab_state> lab_up(const lab_options& o) {
  ROCELAB_RETURN_IF_ERROR(validate_lab_name(o.name));
  if (o.hosts < 1 || o.hosts > 64) return status(error_code::invalid_argument, "hosts: 1..64");
  if (!(o.link_gbps > 0.0) || o.link_gbps > 1000) return status(error_code::invalid_argument, "link-gbps: (0, 1000]");
  if (o.buffer_kb < 16) return status(error_code::invalid_argument, "buffer-kb: at least 16");
  if (o.mtu < 1280 || o.mtu > 9000) return status(error_code::invalid_argument, "mtu: 1280..9000");
  if (::geteuid() != 0) return status(error_code::unavailable, "lab up needs root (namespaces, veth)");
  const std::string dir = o.state_root + "/" + o.name;
  if (!lab_namespaces(o.name).empty() || ::access((dir + "/lab.json").c_str(), F_OK) == 0)
    return status(error_code::invalid_argument, "lab '" + o.name + "' exists; `rocelab lab down --name " + o.name + "` first");
  ROCELAB_RETURN_IF_ERROR(run_program({"mkdir", "-p", dir}));

  lab_state s;
  s.name = o.name;
  s.state_dir = dir;
  s.link_gbps = o.link_gbps;
  s.buffer_bytes = o.buffer_kb * 1024;
  s.mtu = o.mtu;
  const std::string prefix = ns_prefix(o.name);
  for (int i = 1; i <= o.hosts; ++i)
    s.hosts.push_back({"h" + std::to_string(i), prefix + "h" + std::to_string(i), "eth0", mac_string(0, i),
                       "198.18.0." + std::to_string(i), 24, "p" + std::to_string(i), mac_string(1, i), 0, {}});
  s.switch_netns = prefix + "sw";
  s.mirror_port = "mirror";
  s.mirror_port_mac = mac_string(2, 1);
  s.mirror_ipv4 = "198.18.1.254";
  s.capture_netns = prefix + "cap";
  s.capture_ifname = "eth0";
  s.capture_mac = mac_string(3, 1);
  s.capture_ipv4 = "198.18.1.1";
  s.control_socket = dir + "/switch.sock";
  s.switch_log = dir + "/switch.log";

  auto undo = [&](status st) -> result<lab_state> {
    if (const status d = lab_down(o.name, o.state_root); !d.ok())
      std::cerr << "rocelab lab: cleaning up after a failed up: " << d.message() << "\n";
    return std::move(st).with_context("lab up " + o.name);
  };
  if (status st = build(o, s); !st.ok()) return undo(std::move(st));
  if (status st = write_state(s); !st.ok()) return undo(std::move(st));
  if (!o.start_switch) return s;

  auto pid = start_switch(o, s);
  if (!pid) return undo(pid.error());
  s.switch_pid = *pid;
  if (status st = write_state(s); !st.ok()) return undo(std::move(st));
  const auto deadline = std::chrono::steady_clock::now() + o.switch_ready_timeout;
  for (;;) {
    if (ping_switch(s.control_socket).ok()) break;
    if (!alive(*pid))
      return undo({error_code::io_error, "the switch exited while starting; its log:\n" + tail_of(s.switch_log)});
    if (std::chrono::steady_clock::now() >= deadline)
      return undo({error_code::io_error, "the switch did not answer on " + s.control_socket + "; its log:\n" +
                                             tail_of(s.switch_log)});
    std::this_thread::sleep_for(20ms);
  }
  if (o.controller.empty()) return s;
  if (status st = start_agents(o, s); !st.ok()) {
    (void)write_state(s);  // so the undo finds the agents already started
    return undo(std::move(st));
  }
  if (status st = write_state(s); !st.ok()) return undo(std::move(st));
  return s;
}

status lab_down(const std::string& name, const std::string& root) {
  ROCELAB_RETURN_IF_ERROR(validate_lab_name(name));
  const std::string dir = root + "/" + name;
  std::vector<pid_t> pids;
  if (auto s = load_lab(root, name)) {
    if (s->switch_pid > 0 && alive(s->switch_pid) && is_lab_switch(s->switch_pid, name)) pids.push_back(s->switch_pid);
    // Agents live outside the lab's namespaces; their NICs, inside, go with the rest.
    for (const auto& h : s->hosts)
      if (h.agent_pid > 0 && alive(h.agent_pid) && is_lab_agent(h.agent_pid, h.netns)) pids.push_back(h.agent_pid);
  }
  const auto namespaces = lab_namespaces(name);
  for (pid_t p : processes_in(namespaces))
    if (std::find(pids.begin(), pids.end(), p) == pids.end()) pids.push_back(p);
  stop_processes(pids);
  status first;
  for (const auto& ns : namespaces) {
    // Deleting the namespace destroys its veth ends, and with them their peers.
    status st = run_program({"ip", "netns", "del", ns});
    if (!st.ok() && first.ok() && ::access((std::string(netns_dir) + "/" + ns).c_str(), F_OK) == 0) first = st;
  }
  for (const char* f : {"lab.json", "lab.json.tmp", "switch.sock", "switch.log"}) ::unlink((dir + "/" + f).c_str());
  // The agents' and their NICs' logs.
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string f = e->d_name;
      if ((f.starts_with("agent-") || f.starts_with("nic-")) && f.ends_with(".log")) ::unlink((dir + "/" + f).c_str());
    }
    ::closedir(d);
  }
  if (::rmdir(dir.c_str()) != 0 && errno != ENOENT && first.ok()) first = status::from_errno("removing " + dir);
  return std::move(first).with_context("lab down " + name);
}

lab_presence lab_inspect(const std::string& name, const std::string& root) {
  lab_presence p;
  p.name = name;
  p.namespaces = lab_namespaces(name);
  if (auto s = load_lab(root, name)) {
    p.state_file = true;
    p.switch_pid = s->switch_pid;
    p.switch_alive = alive(s->switch_pid) && is_lab_switch(s->switch_pid, name);
    for (const auto& h : s->hosts)
      if (h.agent_pid > 0) p.agents_alive += alive(h.agent_pid) && is_lab_agent(h.agent_pid, h.netns) ? 1 : 0;
  }
  return p;
}

std::vector<std::string> list_labs(const std::string& root) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(root.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != ".." && validate_lab_name(n).ok()) out.push_back(n);
    }
    ::closedir(d);
  }
  if (DIR* d = ::opendir(netns_dir)) {
    while (const dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n.rfind("rlab-", 0) != 0) continue;
      const auto dash = n.find('-', 5);
      if (dash != std::string::npos) out.push_back(n.substr(5, dash - 5));
    }
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

status in_netns(const std::string& netns, const std::function<status()>& fn) { return in_netns_thread(netns, fn); }

}  // namespace rocelab::agents::lab
