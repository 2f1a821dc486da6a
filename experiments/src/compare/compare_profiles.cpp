#include "rocelab/experiments/compare/compare_profiles.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "rocelab/common/bounded_file.hpp"
#include "rocelab/common/units.hpp"

namespace rocelab::experiments {

cluster_cost fabric_cost(const fabric_profile_file& p, std::uint32_t hosts, double oversubscription) {
  cluster_cost c;
  c.hosts = hosts;
  const double radix = std::max<double>(2, p.sw.ports);
  const double h = hosts;
  const double os = oversubscription > 0 ? oversubscription : 1;
  c.tiers = h <= radix ? 1 : h <= radix * radix / 2 ? 2 : 3;
  const double up = c.tiers > 1 ? h / os : 0;
  c.switch_ports = h + 2 * (c.tiers - 1) * up;
  c.switches = std::ceil(c.switch_ports / radix);
  c.optics = h * p.optics_per_host_link + 2 * (c.tiers - 1) * up;
  c.nic_usd = h * p.sw.nic_price_usd;
  c.switch_usd = c.switch_ports * p.sw.price_per_port_usd;
  c.optics_usd = c.optics * p.sw.optic_price_usd;
  c.total_usd = c.nic_usd + c.switch_usd + c.optics_usd;
  c.per_gpu_usd = hosts > 0 ? c.total_usd / h : 0;
  return c;
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
