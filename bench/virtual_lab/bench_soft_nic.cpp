// The rate one soft NIC flow (one RC QP, RDMA WRITE of --bytes, 4 KiB RoCE MTU) reaches
// between two hosts of a virtual lab:
//   soft switch: through `rocelab switch` with ports at --gbps and the NICs paced to it;
//   bridge:      the same veths joined by a Linux bridge in the switch namespace, the
//                NICs paced to --bridge-gbps (the NIC's own ceiling on this machine).
// Rate = bytes x 8 / FCT (post to last ACK). Run as root:
//   build/bench/bench_soft_nic [--gbps 2] [--bridge-gbps 20] [--bytes 33554432] [--repeats 3]
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include <CLI/CLI.hpp>

#include "rocelab/agents/lab/virtual_lab.hpp"
#include "rocelab/fabric/soft_switch/control_client.hpp"
#include "rocelab/traffic/soft_nic/nic_fleet.hpp"
#include "rocelab/traffic/soft_nic/nic_process.hpp"

namespace {

using namespace rocelab;
namespace lab = agents::lab;
namespace nic = traffic::soft_nic;

class one_message final : public fabric::twin::workload {
 public:
  explicit one_message(std::uint64_t bytes) : bytes_(bytes) {}
  void start(fabric::twin::twin_context& ctx) override {
    fabric::twin::message m;
    m.src = 0;
    m.dst = 1;
    m.bytes = bytes_;
    ctx.post(m);
  }

 private:
  std::uint64_t bytes_;
};

// Gb/s of each repeat, or an empty vector on failure.
std::vector<double> measure(const lab::lab_state& s, double gbps, std::uint64_t bytes, int repeats) {
  std::vector<nic::fleet_host> hosts;
  for (int i = 0; i < 2; ++i) {
    const auto& h = s.hosts[i];
    hosts.push_back({h.name, h.netns, h.ifname, {*nic::parse_mac(h.mac), *nic::parse_ipv4(h.ipv4)}});
  }
  nic::fleet_options o;
  o.rocelab_binary = std::string(ROCELAB_BINARY_DIR) + "/rocelab";
  o.nic.line_rate_bps = static_cast<std::int64_t>(gbps * 1e9);
  o.nic.mtu_bytes = 4096;
  o.nic.dcqcn_enabled = false;
  o.nic.retransmit_timeout_ns = 200'000'000;
  std::vector<double> out;
  for (int r = 0; r < repeats; ++r) {
    auto fleet = nic::nic_fleet::start(hosts, o);
    if (!fleet) {
      std::fprintf(stderr, "bench_soft_nic: %s\n", fleet.error().message().c_str());
      return {};
    }
    one_message load(bytes);
    auto res = (*fleet)->run(load, std::chrono::seconds(60));
    if (!res || !res->completed || res->records.flows.empty()) {
      std::fprintf(stderr, "bench_soft_nic: the flow did not complete\n");
      return {};
    }
    const auto& f = res->records.flows[0];
    out.push_back(static_cast<double>(bytes) * 8 / static_cast<double>(f.fct_ns));
    std::fprintf(stderr, "  repeat %d: %.3f Gb/s (fct %.1f ms, retransmits %llu)\n", r, out.back(),
                 static_cast<double>(f.fct_ns) / 1e6, static_cast<unsigned long long>(f.retransmits));
  }
  return out;
}

double best(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }
double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Rate of one soft RoCEv2 NIC flow: soft switch vs Linux bridge on the same veths"};
  double gbps = 2, bridge_gbps = 20;
  std::uint64_t bytes = 32ull << 20;
  int repeats = 3;
  app.add_option("--gbps", gbps, "soft switch port rate and NIC line rate")->capture_default_str();
  app.add_option("--bridge-gbps", bridge_gbps, "NIC line rate through the bridge")->capture_default_str();
  app.add_option("--bytes", bytes, "message size")->capture_default_str();
  app.add_option("--repeats", repeats, "flows per setup")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (::geteuid() != 0) {
    std::fprintf(stderr, "bench_soft_nic: needs root\n");
    return 1;
  }
  const std::string name = "nb" + std::to_string(::getpid() % 100000);
  int rc = 0;
  {
    lab::lab_options o;
    o.name = name;
    o.hosts = 2;
    o.link_gbps = gbps;
    o.buffer_kb = 8192;
    o.rocelab_binary = std::string(ROCELAB_BINARY_DIR) + "/rocelab";
    auto s = lab::lab_up(o);
    if (!s) {
      std::fprintf(stderr, "bench_soft_nic: lab up: %s\n", s.error().message().c_str());
      return 1;
    }
    std::fprintf(stderr, "soft switch at %.2f Gb/s:\n", gbps);
    const auto sw = measure(*s, gbps, bytes, repeats);
    (void)lab::lab_down(name);
    o.start_switch = false;
    auto b = lab::lab_up(o);
    if (!b) {
      std::fprintf(stderr, "bench_soft_nic: lab up: %s\n", b.error().message().c_str());
      return 1;
    }
    std::vector<double> br;
    const std::string& ns = b->switch_netns;
    if (lab::run_program({"ip", "-n", ns, "link", "add", "br0", "type", "bridge"}).ok() &&
        lab::run_program({"ip", "-n", ns, "link", "set", b->hosts[0].switch_port, "master", "br0"}).ok() &&
        lab::run_program({"ip", "-n", ns, "link", "set", b->hosts[1].switch_port, "master", "br0"}).ok() &&
        lab::run_program({"ip", "-n", ns, "link", "set", "br0", "up"}).ok()) {
      std::fprintf(stderr, "Linux bridge, NIC paced to %.2f Gb/s:\n", bridge_gbps);
      br = measure(*b, bridge_gbps, bytes, repeats);
    } else {
      std::fprintf(stderr, "bench_soft_nic: could not make the bridge\n");
    }
    (void)lab::lab_down(name);
    std::printf("setup         line_gbps  best_gbps  median_gbps\n");
    std::printf("soft_switch   %9.2f  %9.3f  %11.3f\n", gbps, best(sw), median(sw));
    std::printf("linux_bridge  %9.2f  %9.3f  %11.3f\n", bridge_gbps, best(br), median(br));
    if (sw.empty() || br.empty()) rc = 1;
  }
  return rc;
}
