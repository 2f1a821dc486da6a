// bench_fabric_graph: what the twin's fabric graph and routes cost at cluster scale:
// for fat-trees of k = 8, 16 and 32 (128, 1,024 and 8,192 hosts) and a 1,024-host
// leaf-spine, the wall time to build the graph, to compute its routing tables (one
// breadth-first search per edge switch), and to build a whole twin engine on it (every
// switch model and link, no traffic: switch_config_of), the peak resident memory after
// each, and the cost of one flow's ECMP path (path_code, then its hops).
// Usage: bench_fabric_graph [max_k]   (default 32)
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "rocelab/fabric/twin/fabric_graph.hpp"
#include "rocelab/fabric/twin/routing.hpp"
#include "rocelab/fabric/twin/twin.hpp"

namespace {

using namespace rocelab::fabric::twin;
using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

// Peak resident set of this process so far, MiB (Linux: ru_maxrss in KiB).
double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

void measure(const std::string& name, const topology_config& t) {
  auto t0 = clock_type::now();
  auto g = fabric_graph::build(t);
  const double graph_ms = ms_since(t0);
  if (!g) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), g.error().message().c_str());
    std::exit(1);
  }
  const double graph_rss = peak_rss_mib();
  t0 = clock_type::now();
  auto routes = fabric_routes::create(t);
  const double routes_ms = ms_since(t0);
  if (!routes) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), routes.error().message().c_str());
    std::exit(1);
  }
  const double routes_rss = peak_rss_mib();
  const fabric_routes& r = **routes;
  // One flow per host to a host half the fabric away, 16 QPs each.
  const std::uint32_t hosts = r.hosts();
  std::vector<hop> hops;
  std::uint64_t checksum = 0, flows = 0;
  t0 = clock_type::now();
  for (std::uint32_t qp = 1; qp <= 16; ++qp)
    for (std::uint32_t src = 0; src < hosts; ++src) {
      const std::uint32_t dst = (src + hosts / 2 + qp) % hosts;
      r.hops(src, dst, r.path_code({src, dst, qp, 0, 0}, 1), hops);
      checksum += hops.back().egress_port + hops.size();
      ++flows;
    }
  const double per_flow_ns = ms_since(t0) * 1e6 / static_cast<double>(flows);
  twin_config cfg;
  cfg.topology = t;
  t0 = clock_type::now();
  auto sw = switch_config_of(cfg, 0);
  const double engine_ms = ms_since(t0);
  if (!sw) {
    std::fprintf(stderr, "%s: engine: %s\n", name.c_str(), sw.error().message().c_str());
    std::exit(1);
  }
  std::printf("%-22s %6u hosts %5u switches | graph %8.1f ms (peak %6.1f MiB) | routes %8.1f ms (peak %6.1f MiB) | "
              "path %6.0f ns/flow | engine %8.1f ms (peak %6.1f MiB)  [%llu]\n",
              name.c_str(), hosts, g->switches(), graph_ms, graph_rss, routes_ms, routes_rss, per_flow_ns, engine_ms,
              peak_rss_mib(), static_cast<unsigned long long>(checksum % 1000));
}

topology_config fat_tree(std::uint32_t k) {
  topology_config t;
  t.type = topology_config::kind::fat_tree;
  t.k = k;
  t.hosts = k * k * k / 4;
  t.link_gbps = 100;
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const std::uint32_t max_k = argc > 1 ? static_cast<std::uint32_t>(std::atoi(argv[1])) : 32;
  std::printf("peak resident memory is the process's so far (each line includes the lines before it)\n");
  topology_config ls;
  ls.type = topology_config::kind::leaf_spine;
  ls.hosts = 1024;
  ls.leaves = 64;
  ls.spines = 16;
  ls.link_gbps = 100;
  measure("leaf_spine 64x16", ls);
  for (std::uint32_t k = 8; k <= max_k; k *= 2) measure("fat_tree k=" + std::to_string(k), fat_tree(k));
  return 0;
}
