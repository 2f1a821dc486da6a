#include "rocelab/experiments/spec/spec_limits.hpp"

#include <cmath>
#include <optional>
#include <sstream>

#include "spec/spec_origin.hpp"

namespace rocelab::experiments {
namespace {

// Above any link built or announced (1.6 Tb/s ports), and far below where a rate in bit/s
// stops fitting in 64 bits (9.2e9 Gb/s).
constexpr double max_link_gbps = 100'000;
constexpr double min_link_gbps = 0.001;

std::string number(double v) {
  std::ostringstream s;
  s.precision(12);
  s << v;
  return s.str();
}

bool leaf_spine(const experiment_spec& s) { return s.topology.type == "leaf_spine"; }
bool rails(const experiment_spec& s) { return s.topology.type == "rail_optimized"; }

std::vector<spec_limit> build_limits() {
  const std::string twin_ports = "the twin numbers switch ports and devices in 16 bits";
  const std::string rates = "rates are whole bit/s; above 100 Tb/s is no link";
  std::vector<spec_limit> t;
  t.push_back({"topology.hosts", 2, 65535, "", twin_ports,
               [](const experiment_spec& s) -> std::optional<double> { return s.topology.hosts; }});
  t.push_back({"topology.leaves", 0, 65535, "", twin_ports,
               [](const experiment_spec& s) -> std::optional<double> {
                 if (!leaf_spine(s)) return std::nullopt;
                 return s.topology.leaves;
               }});
  t.push_back({"topology.spines", 0, 256, "", "the twin's leaf-spine has at most 256 spines (uplinks per leaf)",
               [](const experiment_spec& s) -> std::optional<double> {
                 if (!leaf_spine(s) && !rails(s)) return std::nullopt;
                 return s.topology.spines;
               }});
  t.push_back({"topology.leaves", 0, 65535, "leaves in all (leaves x nics_per_host)", twin_ports,
               [](const experiment_spec& s) -> std::optional<double> {
                 if (!rails(s)) return std::nullopt;
                 return static_cast<double>(s.topology.leaves) * s.topology.nics_per_host;
               }});
  t.push_back({"topology.local_link_gbps", min_link_gbps, max_link_gbps, "Gb/s", rates,
               [](const experiment_spec& s) -> std::optional<double> {
                 if (!rails(s)) return std::nullopt;
                 return s.topology.local_link_gbps;
               }});
  t.push_back({"topology.link_gbps", min_link_gbps, max_link_gbps, "Gb/s", rates,
               [](const experiment_spec& s) -> std::optional<double> { return s.topology.link_gbps; }});
  t.push_back({"topology.spine_link_gbps", 0, max_link_gbps, "Gb/s", rates,
               [](const experiment_spec& s) -> std::optional<double> { return s.topology.spine_link_gbps; }});
  // The uplink rate the twin derives when spine_link_gbps is 0.
  t.push_back({"topology.oversubscription", min_link_gbps, max_link_gbps, "Gb/s (the derived uplink rate)",
               rates + "; the uplink rate is link_gbps x hosts per leaf / (oversubscription x spines), on a " +
                   "fat_tree link_gbps / oversubscription, on a rail_optimized fabric link_gbps x servers per "
                   "rail leaf / (oversubscription x spines)",
               [](const experiment_spec& s) -> std::optional<double> {
                 const topology_spec& t = s.topology;
                 if (t.spine_link_gbps > 0 || !(t.oversubscription > 0)) return std::nullopt;
                 if (t.type == "fat_tree") return t.link_gbps / t.oversubscription;
                 if (rails(s)) {
                   if (t.nics_per_host == 0 || t.leaves == 0 || t.spines == 0) return std::nullopt;
                   return static_cast<double>(t.hosts / t.nics_per_host / t.leaves) * t.link_gbps /
                          (t.oversubscription * t.spines);
                 }
                 if (!leaf_spine(s) || t.leaves == 0 || t.spines == 0) return std::nullopt;
                 return static_cast<double>(t.hosts / t.leaves) * t.link_gbps / (t.oversubscription * t.spines);
               }});
  return t;
}

}  // namespace

const std::vector<spec_limit>& spec_limits() {
  static const std::vector<spec_limit> table = build_limits();
  return table;
}

status check_limits(const experiment_spec& spec) {
  for (const spec_limit& l : spec_limits()) {
    const std::optional<double> v = l.value(spec);
    if (!v) continue;
    if (std::isfinite(*v) && *v >= l.lo && *v <= l.hi) continue;
    const std::string unit = l.unit.empty() ? "" : " " + l.unit;
    return {error_code::invalid_argument, origin_of(spec, l.path) + ": " + l.path + ": " + number(*v) +
                                              " is outside " + number(l.lo) + ".." + number(l.hi) + unit + " (" +
                                              l.reason + ")"};
  }
  return status::success();
}

}  // namespace rocelab::experiments
