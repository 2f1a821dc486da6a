#pragma once
// Scenarios of the HPCC project's ns-3 simulator (the most used RDMA simulator in
// research, and the base of SimAI), so published scenarios run unchanged on the twin and
// results compare line by line:
//   in:  config.txt (`KEY value` lines), topo.txt, flow.txt
//   out: fct.txt and pfc.txt in that simulator's formats.
// See shared/scenarios/hpcc-ns3/README.md for the formats and the simulator's modelling
// shortcuts, which the twin reproduces when twin_config::hpcc_ns3_compat is set.
//
// Parsing is pure (text in, scenario out); load_hpcc_scenario() reads the files. Errors
// name the file, the line and the key. Supported: CC_MODE 1 (DCQCN) on any topology whose
// hosts are numbered first. A single switch, or a two-tier leaf-spine with its hosts in
// blocks per leaf, becomes the twin's own topology of that kind; any other (a fat-tree,
// three tiers, links of different speeds or delays) the twin's topology graph as the file
// gives it, switches sw0, sw1, ... in node id order, routed as that simulator routes:
// shortest paths, ECMP over every equal-cost next hop with its own per-switch hash.

#include <cstdint>
#include <string>
#include <vector>

#include "rocelab/common/records.hpp"
#include "rocelab/common/result.hpp"
#include "rocelab/fabric/twin/twin.hpp"

namespace rocelab::experiments {

struct hpcc_flow {
  std::uint32_t src = 0;  // node id = host index
  std::uint32_t dst = 0;
  std::uint8_t priority = 3;
  std::uint16_t dport = 0;
  std::uint16_t sport = 0;  // as the simulator assigns them: 10000, 10001, ... per source
  std::uint64_t bytes = 0;
  std::int64_t start_ns = 0;
};

struct hpcc_scenario {
  fabric::twin::twin_config config;  // hpcc_ns3_compat set
  std::vector<hpcc_flow> flows;      // flow.txt order; messages carry tag = index
  std::uint32_t hosts = 0;
  std::vector<std::uint32_t> switch_nodes;  // ns-3 node ids per switch device: single switch, leaves then spines, or graph order
  std::uint32_t payload_bytes = 1000;
  std::string fct_output;            // paths as the config names them, resolved against its folder
  std::string pfc_output;
  std::vector<std::string> notes;    // settings read but without effect in DCQCN mode
};

struct hpcc_texts {
  std::string config, topology, flows;
  std::string config_name = "config.txt", topology_name = "topo.txt", flows_name = "flow.txt";
  std::string base_dir = ".";  // where relative output paths are resolved
};

[[nodiscard]] result<hpcc_scenario> parse_hpcc_scenario(const hpcc_texts& texts);
// Reads config.txt and the topology and flow files it names (relative to its folder).
[[nodiscard]] result<hpcc_scenario> load_hpcc_scenario(const std::string& config_path);

// The messages of the scenario's flows, for a workload to post.
[[nodiscard]] std::vector<fabric::twin::message> hpcc_messages(const hpcc_scenario& scenario);

// Runs the scenario's flows on the twin (in compatibility mode, as parsed).
[[nodiscard]] result<run_records> run_hpcc_scenario(const hpcc_scenario& scenario);

// That simulator's "standalone" FCT: base RTT (twice the path's propagation delay plus
// one payload's serialization per hop) plus all bytes with headers at the path's
// slowest link.
[[nodiscard]] std::int64_t hpcc_ideal_fct_ns(const hpcc_scenario& scenario, const hpcc_flow& flow);

// fct.txt: `sip dip sport dport bytes start_ns fct_ns ideal_fct_ns`, one line per
// completed flow in completion order, IPs in hex (node id n is 11.0.n.1, 0x0b000001 + n<<8).
[[nodiscard]] std::string format_hpcc_fct(const hpcc_scenario& scenario, const run_records& records);
// pfc.txt: `time_ns node node_type ifindex type`, where the PFC frame was received:
// type 1 at the start of each pause interval, 0 at its end; node_type 0 host, 1 switch;
// ifindex as the simulator numbers devices (1 + the port's position in topo.txt order).
[[nodiscard]] std::string format_hpcc_pfc(const hpcc_scenario& scenario, const run_records& records);

}  // namespace rocelab::experiments
