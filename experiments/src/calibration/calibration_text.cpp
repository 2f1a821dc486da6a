#include "rocelab/experiments/calibration/calibration_text.hpp"

#include <cstdio>

#include <nlohmann/json.hpp>

namespace rocelab::experiments {

using json = nlohmann::json;

namespace {

std::string us(std::int64_t ns) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", static_cast<double>(ns) / 1000.0);
  return b;
}

// "p50 / p99 us (n)" or "not measured".
std::string cell(const fabric::delay_quantiles& q) {
  if (q.empty()) return "not measured";
  return us(q.median()) + " / " + us(q.p99()) + " (" + std::to_string(q.samples) + ")";
}

json delay(const fabric::delay_quantiles& q) {
  if (q.empty()) return nullptr;
  json quantiles = json::array();
  for (std::size_t i = 0; i < q.ns.size(); ++i) quantiles.push_back({fabric::delay_quantiles::probabilities[i], q.ns[i]});
  return {{"samples", q.samples}, {"p50_ns", q.median()}, {"p99_ns", q.p99()}, {"quantiles_ns", quantiles}};
}

}  // namespace

std::string calibration_table(const calibration& c) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "calibration of lab %s, spec %s, %.3g Gb/s, MTU %u, taken %s\n", c.lab.c_str(),
                c.spec.c_str(), c.link_gbps, c.mtu_bytes, c.taken_at.c_str());
  out += line;
  out += c.load == calibration_load_workload
             ? "host delays taken under the spec's own workload; rates, base RTT, forwarding and CNP loop idle\n"
             : "every delay taken idle, one message at a time\n";
  out += "delays: p50 / p99 in us (samples)\n\n";
  std::snprintf(line, sizeof line, "%-8s %-26s %-26s %-26s %s\n", "host", "send processing", "receive processing",
                "pacing lateness", "achieved Gb/s");
  out += line;
  for (const auto& h : c.hosts) {
    const std::string rate = h.achieved_gbps > 0 ? [&] {
      char b[32];
      std::snprintf(b, sizeof b, "%.4f", h.achieved_gbps);
      return std::string(b);
    }() : std::string("not measured");
    std::snprintf(line, sizeof line, "%-8s %-26s %-26s %-26s %s\n", h.name.c_str(), cell(h.send_processing).c_str(),
                  cell(h.receive_processing).c_str(), cell(h.pacing_lateness).c_str(), rate.c_str());
    out += line;
  }
  out += "\n";
  std::snprintf(line, sizeof line, "%-8s %s\n", "port", "forwarding beyond store and forward");
  out += line;
  for (const auto& p : c.ports) {
    std::snprintf(line, sizeof line, "%-8u %s\n", p.port, cell(p.forwarding).c_str());
    out += line;
  }
  out += "\n";
  std::snprintf(line, sizeof line, "%-12s %s\n", "pair", "base RTT (64 B WRITE, post to ACK)");
  out += line;
  for (const auto& p : c.pairs) {
    std::snprintf(line, sizeof line, "%-12s %s\n", (p.src + "->" + p.dst).c_str(), cell(p.base_rtt).c_str());
    out += line;
  }
  out += "\nCNP loop (CE mark out of the switch to the flow's CNP out of it): " + cell(c.cnp_loop) + "\n";
  return out;
}

std::string calibration_json(const calibration& c) {
  json hosts = json::array(), pairs = json::array(), ports = json::array();
  for (const auto& h : c.hosts)
    hosts.push_back({{"name", h.name},
                     {"send_processing", delay(h.send_processing)},
                     {"receive_processing", delay(h.receive_processing)},
                     {"pacing_lateness", delay(h.pacing_lateness)},
                     {"achieved_gbps", h.achieved_gbps > 0 ? json(h.achieved_gbps) : json(nullptr)}});
  for (const auto& p : c.pairs) pairs.push_back({{"src", p.src}, {"dst", p.dst}, {"base_rtt", delay(p.base_rtt)}});
  for (const auto& p : c.ports) ports.push_back({{"port", p.port}, {"forwarding", delay(p.forwarding)}});
  const json out = {{"version", c.version}, {"lab", c.lab},       {"taken_at", c.taken_at},
                    {"spec", c.spec},       {"load", c.load}, {"link_gbps", c.link_gbps}, {"mtu_bytes", c.mtu_bytes},
                    {"hosts", hosts},       {"pairs", pairs},     {"ports", ports},
                    {"cnp_loop", delay(c.cnp_loop)}};
  return out.dump(2);
}

}  // namespace rocelab::experiments
