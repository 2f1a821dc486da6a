#include "rocelab/experiments/compare/compare_profiles.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "rocelab/common/bounded_file.hpp"
#include "rocelab/common/units.hpp"

namespace rocelab::experiments {

namespace {

// Seed list prices per link speed, the same sources and caveats as the profiles' (public
// list-price ranges, 2024): replace with your quotes. The 400G rows are the shipped
// profiles' own figures.
constexpr speed_prices ethernet_speed_prices[] = {
    {25, 350, 60}, {50, 450, 120}, {100, 700, 250}, {200, 1100, 450}, {400, 1800, 800}, {800, 2600, 1300},
};
// InfiniBand EDR, HDR, NDR, XDR HCAs and transceivers.
constexpr speed_prices infiniband_speed_prices[] = {
    {100, 900, 300}, {200, 1500, 600}, {400, 2200, 1100}, {800, 3000, 1600},
};

std::string gbps_text(double gbps) {
  char b[32];
  std::snprintf(b, sizeof b, "%gG", gbps);
  return b;
}

std::string usd_text(double usd) {
  char b[32];
  std::snprintf(b, sizeof b, "$%.0f", usd);
  return b;
}

}  // namespace

std::span<const speed_prices> seed_speed_prices(fabric::link_layer link) {
  if (link == fabric::link_layer::infiniband) return infiniband_speed_prices;
  return ethernet_speed_prices;
}

result<speed_prices> prices_at(const fabric_profile_file& p, double gbps) {
  if (!(gbps > 0)) return status(error_code::invalid_argument, "profile " + p.sw.name + ": no link speed to price");
  if (std::abs(gbps - p.sw.port_gbps) < 1e-9 && p.sw.nic_price_usd > 0 && p.sw.optic_price_usd > 0)
    return speed_prices{p.sw.port_gbps, p.sw.nic_price_usd, p.sw.optic_price_usd};
  const auto table = seed_speed_prices(p.sw.link);
  for (const speed_prices& row : table)
    if (row.gbps + 1e-9 >= gbps) return row;
  std::string listed;
  for (const speed_prices& row : table) listed += (listed.empty() ? "" : ", ") + gbps_text(row.gbps);
  return status(error_code::invalid_argument, "profile " + p.sw.name + ": no price for " + gbps_text(gbps) +
                                                  " links (the " + fabric::to_string(p.sw.link) +
                                                  " seed table lists " + listed + ")");
}

result<cluster_cost> topology_cost(const fabric_profile_file& p, const topology_spec& t) {
  const std::string where = "pricing " + t.type + " on profile " + p.sw.name;
  if (t.hosts == 0) return status(error_code::invalid_argument, where + ": no hosts");
  if (!(p.sw.port_gbps > 0)) return status(error_code::invalid_argument, where + ": port_gbps must be > 0");
  cluster_cost c;
  c.hosts = t.hosts;
  c.topology = t.type;
  c.radix = p.sw.ports;
  c.port_gbps = p.sw.port_gbps;
  c.link_gbps = t.link_gbps;
  const double radix = std::max<double>(1, p.sw.ports);
  const double h = t.hosts;
  const double host_port = t.link_gbps / p.sw.port_gbps;  // a host link in the profile's ports
  // Boxes for one switch whose links need `ports` of the profile's ports.
  auto boxes = [&](double ports) { return std::max(1.0, std::ceil(ports / radix - 1e-9)); };
  auto host_prices = prices_at(p, t.link_gbps);
  if (!host_prices.ok()) return std::move(host_prices).error().with_context(where);
  c.host_prices = *host_prices;
  double uplink_links = 0;
  if (t.type == "leaf_spine") {
    if (t.leaves == 0 || t.spines == 0)
      return status(error_code::invalid_argument, where + ": a leaf-spine needs leaves and spines");
    c.leaves = t.leaves;
    c.spines = t.spines;
    const double hpl = h / t.leaves;
    const double os = t.oversubscription > 0 ? t.oversubscription : 1;
    // The twin's uplink speed (topology_config): as given, or the leaf's host bandwidth
    // over the oversubscription, split over the spines.
    c.uplink_gbps = t.spine_link_gbps > 0 ? t.spine_link_gbps : hpl * t.link_gbps / (os * t.spines);
    const double up_port = c.uplink_gbps / p.sw.port_gbps;
    c.ports_per_leaf = hpl * host_port + t.spines * up_port;
    c.ports_per_spine = t.leaves * up_port;
    c.switch_ports = t.leaves * c.ports_per_leaf + t.spines * c.ports_per_spine;
    c.switches = t.leaves * boxes(c.ports_per_leaf) + t.spines * boxes(c.ports_per_spine);
    uplink_links = static_cast<double>(t.leaves) * t.spines;
    auto up = prices_at(p, c.uplink_gbps);
    if (!up.ok()) return std::move(up).error().with_context(where + ", uplinks");
    c.uplink_prices = *up;
  } else if (t.type == "single_switch") {
    c.ports_per_leaf = h * host_port;
    c.switch_ports = c.ports_per_leaf;
    c.switches = boxes(c.ports_per_leaf);
  } else {
    return status(error_code::invalid_argument, where + ": unknown topology type");
  }
  c.uplink_optics = 2 * uplink_links;
  c.optics = h * p.optics_per_host_link + c.uplink_optics;
  c.nic_usd = h * c.host_prices.nic_usd;
  c.switch_usd = c.switches * radix * p.sw.price_per_port_usd;
  c.optics_usd = h * p.optics_per_host_link * c.host_prices.optic_usd + c.uplink_optics * c.uplink_prices.optic_usd;
  c.total_usd = c.nic_usd + c.switch_usd + c.optics_usd;
  c.per_gpu_usd = c.total_usd / h;
  return c;
}

std::string cost_basis_text(const cluster_cost& c) {
  char ports[64];
  auto box = [&](double used) {
    std::snprintf(ports, sizeof ports, "%g of %u x %s ports", used, c.radix, gbps_text(c.port_gbps).c_str());
    return std::string(ports);
  };
  char n[32];
  std::snprintf(n, sizeof n, "%g", c.switches);
  std::string s = c.topology;
  if (c.topology == "leaf_spine")
    s += ": " + std::to_string(c.leaves) + " leaves (" + box(c.ports_per_leaf) + " each) + " +
         std::to_string(c.spines) + " spines (" + box(c.ports_per_spine) + " each)";
  else
    s += ": " + box(c.ports_per_leaf);
  s += ", " + std::string(n) + " switches; NICs " + gbps_text(c.host_prices.gbps) + " " + usd_text(c.host_prices.nic_usd) +
       "; optics " + gbps_text(c.host_prices.gbps) + " " + usd_text(c.host_prices.optic_usd) + " host";
  if (c.uplink_optics > 0)
    s += " / " + gbps_text(c.uplink_prices.gbps) + " " + usd_text(c.uplink_prices.optic_usd) + " uplink";
  return s;
}

std::string default_profile_file(const std::string& fabric) {
  if (fabric == "ib" || fabric == "infiniband") return "infiniband-ndr.yaml";
  if (fabric == "roce-deep" || fabric == "roce-deep-buffer") return "roce-deep-buffer.yaml";
  if (fabric == "roce" || fabric == "roce-tuned" || fabric == "roce-default" || fabric == "roce-shallow" ||
      fabric == "roce-shallow-buffer")
    return "roce-shallow-buffer.yaml";
  // Any other name is a profile file of that name: a typo ("roce-tunned") must not run
  // silently as some default fabric.
  return fabric + ".yaml";
}

namespace {

status at(const std::string& path, const YAML::Node& n, const std::string& field, const std::string& what) {
  return status(error_code::invalid_argument,
                path + ":" + std::to_string(n.Mark().line + 1) + ": " + field + ": " + what);
}

}  // namespace

result<fabric_profile_file> load_fabric_profile(const std::string& path) {
  auto text = read_bounded_file(path, max_spec_file_bytes, "fabric profile");
  if (!text) return text.error();
  YAML::Node root;
  try {
    root = YAML::Load(*text);
  } catch (const YAML::Exception& e) {
    return status(error_code::malformed_input, path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  if (!root.IsMap()) return status(error_code::malformed_input, path + ": a profile is a map of fields");
  fabric_profile_file f;
  f.path = path;
  for (const auto& kv : root) {
    const std::string key = kv.first.as<std::string>();
    const YAML::Node& v = kv.second;
    const std::string text = v.IsScalar() ? v.as<std::string>() : "";
    auto number = [&](double& out) -> status {
      try {
        out = v.as<double>();
      } catch (const YAML::Exception&) {
        return at(path, v, key, "expects a number, got '" + text + "'");
      }
      if (!(out >= 0)) return at(path, v, key, "must be >= 0");
      return status::success();
    };
    auto size = [&](std::int64_t& out) -> status {
      auto r = parse_size_bytes(text);
      if (!r.ok()) return at(path, v, key, r.error().message());
      out = *r;
      return status::success();
    };
    auto duration = [&](std::int64_t& out) -> status {
      auto r = parse_duration_ns(text);
      if (!r.ok()) return at(path, v, key, r.error().message());
      out = *r;
      return status::success();
    };
    status st = status::success();
    double d = 0;
    if (key == "name") {
      f.sw.name = text;
    } else if (key == "link") {
      auto l = fabric::parse_link_layer(text);
      if (!l.ok()) return at(path, v, key, l.error().message());
      f.sw.link = *l;
    } else if (key == "routing") {
      auto r = fabric::parse_routing_mode(text);
      if (!r.ok()) return at(path, v, key, r.error().message());
      f.routing = *r;
    } else if (key == "port_gbps") {
      st = number(f.sw.port_gbps);
    } else if (key == "ports") {
      st = number(d);
      f.sw.ports = static_cast<std::uint32_t>(d);
    } else if (key == "buffer_bytes") {
      st = size(f.sw.buffer_bytes);
    } else if (key == "cell_bytes") {
      st = size(f.sw.cell_bytes);
    } else if (key == "port_to_port_latency_ns") {
      st = duration(f.sw.port_to_port_latency_ns);
    } else if (key == "ib_vl_buffer_bytes") {
      st = size(f.ib_vl_buffer_bytes);
    } else if (key == "price_per_port_usd") {
      st = number(f.sw.price_per_port_usd);
    } else if (key == "nic_price_usd") {
      st = number(f.sw.nic_price_usd);
    } else if (key == "optic_price_usd") {
      st = number(f.sw.optic_price_usd);
    } else if (key == "optics_per_host_link") {
      st = number(f.optics_per_host_link);
    } else if (key == "alpha") {
      st = number(f.sw.alpha);
      if (st.ok() && !(f.sw.alpha > 0)) st = at(path, v, key, "must be > 0");
    } else if (key == "cable_m") {
      st = number(f.sw.cable_m);
    } else if (key == "peer_response_ns") {
      st = duration(f.sw.peer_response_ns);
    } else if (key == "headroom") {
      if (text != "per_port" && text != "shared") return at(path, v, key, "expects per_port or shared, got '" + text + "'");
      f.sw.headroom_shared = text == "shared";
    } else if (key == "headroom_oversubscription") {
      st = number(f.sw.headroom_oversubscription);
      if (st.ok() && !(f.sw.headroom_oversubscription >= 1)) st = at(path, v, key, "must be >= 1");
    } else if (key == "source") {
      f.sw.source = text;
    } else {
      return at(path, kv.first, key,
                "unknown field (name, link, routing, port_gbps, ports, buffer_bytes, cell_bytes, "
                "port_to_port_latency_ns, alpha, cable_m, peer_response_ns, headroom, headroom_oversubscription, "
                "ib_vl_buffer_bytes, price_per_port_usd, nic_price_usd, optic_price_usd, optics_per_host_link, source)");
    }
    ROCELAB_RETURN_IF_ERROR(st);
  }
  if (f.sw.name.empty()) return status(error_code::invalid_argument, path + ": name is required");
  if (f.sw.ports < 2) return status(error_code::invalid_argument, path + ": ports (the radix) must be >= 2");
  if (f.sw.buffer_bytes <= 0) return status(error_code::invalid_argument, path + ": buffer_bytes is required");
  if (f.sw.cell_bytes <= 0) return status(error_code::invalid_argument, path + ": cell_bytes must be > 0");
  return f;
}

}  // namespace rocelab::experiments
