#include "rocelab/controller/inventory.hpp"

#include <arpa/inet.h>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "rocelab/common/bounded_file.hpp"
#include "rocelab/experiments/run/backend_traits.hpp"

namespace rocelab::controller {
namespace {

status bad(const std::string& source, const YAML::Node& node, const std::string& key, const std::string& what) {
  return {error_code::invalid_argument, source + ":" + std::to_string(node.Mark().line + 1) + ": " + key + ": " + what};
}

// Reads a required scalar, or an optional one when `required` is false.
status scalar(const std::string& source, const YAML::Node& parent, const char* key, const std::string& path,
              std::string& out, bool required = true) {
  const YAML::Node n = parent[key];
  if (!n) return required ? bad(source, parent, path + key, "missing") : status::success();
  if (!n.IsScalar()) return bad(source, n, path + key, "expected a value");
  out = n.Scalar();
  return status::success();
}

status only_keys(const std::string& source, const YAML::Node& map, const std::string& path,
                 std::initializer_list<const char*> keys) {
  if (!map.IsMap()) return bad(source, map, path.empty() ? "(top)" : path, "expected a mapping");
  for (const auto& kv : map) {
    const std::string k = kv.first.Scalar();
    if (std::none_of(keys.begin(), keys.end(), [&](const char* x) { return k == x; }))
      return bad(source, kv.first, path + k, "unknown key");
  }
  return status::success();
}

}  // namespace

result<lab_inventory> load_inventory(const std::string& yaml_text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    return status(error_code::invalid_argument, source + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  lab_inventory inv;
  ROCELAB_RETURN_IF_ERROR(only_keys(source, root, "", {"name", "switch", "hosts", "mirror", "capture"}));
  ROCELAB_RETURN_IF_ERROR(scalar(source, root, "name", "", inv.name));

  const YAML::Node sw = root["switch"];
  if (!sw) return bad(source, root, "switch", "missing");
  ROCELAB_RETURN_IF_ERROR(only_keys(source, sw, "switch.", {"name", "driver", "ports"}));
  ROCELAB_RETURN_IF_ERROR(scalar(source, sw, "name", "switch.", inv.switch_name));
  ROCELAB_RETURN_IF_ERROR(scalar(source, sw, "driver", "switch.", inv.switch_driver));
  if (inv.switch_driver != "sonic" && inv.switch_driver != "soft")
    return bad(source, sw["driver"], "switch.driver", "expected sonic or soft, not '" + inv.switch_driver + "'");
  const YAML::Node ports = sw["ports"];
  if (!ports || !ports.IsSequence() || ports.size() == 0) return bad(source, sw, "switch.ports", "expected a list of ports");
  for (const auto& p : ports) inv.switch_ports.push_back(p.Scalar());

  const YAML::Node hosts = root["hosts"];
  if (!hosts || !hosts.IsSequence() || hosts.size() == 0) return bad(source, root, "hosts", "expected a list of hosts");
  std::set<std::string> names;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    const YAML::Node h = hosts[i];
    const std::string path = "hosts[" + std::to_string(i) + "].";
    ROCELAB_RETURN_IF_ERROR(only_keys(source, h, path, {"name", "nic", "switch_port"}));
    inventory_host host;
    ROCELAB_RETURN_IF_ERROR(scalar(source, h, "name", path, host.name));
    ROCELAB_RETURN_IF_ERROR(scalar(source, h, "switch_port", path, host.switch_port));
    const YAML::Node nic = h["nic"];
    if (!nic) return bad(source, h, path + "nic", "missing");
    ROCELAB_RETURN_IF_ERROR(only_keys(source, nic, path + "nic.", {"device", "driver", "ip"}));
    ROCELAB_RETURN_IF_ERROR(scalar(source, nic, "device", path + "nic.", host.nic_device));
    ROCELAB_RETURN_IF_ERROR(scalar(source, nic, "driver", path + "nic.", host.nic_driver));
    ROCELAB_RETURN_IF_ERROR(scalar(source, nic, "ip", path + "nic.", host.nic_ip, false));
    if (!host.nic_ip.empty()) {
      in_addr a{};
      if (::inet_pton(AF_INET, host.nic_ip.c_str(), &a) != 1)
        return bad(source, nic["ip"], path + "nic.ip", "expected an IPv4 address, not '" + host.nic_ip + "'");
    }
    if (host.nic_driver != "mlx5" && host.nic_driver != "soft")
      return bad(source, nic["driver"], path + "nic.driver", "expected mlx5 or soft");
    if (!names.insert(host.name).second) return bad(source, h, path + "name", "duplicate host '" + host.name + "'");
    inv.hosts.push_back(std::move(host));
  }

  if (const YAML::Node m = root["mirror"]) {
    ROCELAB_RETURN_IF_ERROR(only_keys(source, m, "mirror.", {"session", "destination_port", "direction"}));
    ROCELAB_RETURN_IF_ERROR(scalar(source, m, "session", "mirror.", inv.mirror_session));
    ROCELAB_RETURN_IF_ERROR(scalar(source, m, "destination_port", "mirror.", inv.mirror_destination_port));
    ROCELAB_RETURN_IF_ERROR(scalar(source, m, "direction", "mirror.", inv.mirror_direction, false));
    if (inv.mirror_direction != "rx" && inv.mirror_direction != "tx" && inv.mirror_direction != "both")
      return bad(source, m["direction"], "mirror.direction", "expected rx, tx or both");
  }
  if (const YAML::Node c = root["capture"]) {
    ROCELAB_RETURN_IF_ERROR(only_keys(source, c, "capture.", {"host", "device"}));
    ROCELAB_RETURN_IF_ERROR(scalar(source, c, "host", "capture.", inv.capture_host));
    ROCELAB_RETURN_IF_ERROR(scalar(source, c, "device", "capture.", inv.capture_device));
  }
  return inv;
}

result<lab_inventory> load_inventory_file(const std::string& path) {
  auto text = read_bounded_file(path, max_inventory_file_bytes, "inventory");
  if (!text) return text.error();
  return load_inventory(*text, path);
}

status validate_against(const experiments::experiment_spec& spec, const lab_inventory& inv) {
  const std::string where = "inventory " + inv.name + ": ";
  const auto fail = [&](const std::string& what) { return status(error_code::invalid_argument, where + what); };
  const experiments::backend_traits backend = experiments::backend_traits_of(spec.backend);
  if (backend.runs_in_controller)
    return fail("backend " + spec.backend + " runs in the controller; it needs no lab");
  if (spec.topology.type != "single_switch")
    return fail("topology.type " + spec.topology.type + ": the lab has one switch (" + inv.switch_name + ")");
  if (spec.topology.hosts > inv.hosts.size())
    return fail("topology.hosts " + std::to_string(spec.topology.hosts) + " but the lab has " +
                std::to_string(inv.hosts.size()) + " hosts");
  const std::set<std::string> ports(inv.switch_ports.begin(), inv.switch_ports.end());
  std::set<std::string> used;
  for (std::size_t i = 0; i < spec.topology.hosts; ++i) {
    const auto& h = inv.hosts[i];
    if (!ports.contains(h.switch_port))
      return fail("host " + h.name + ": switch port " + h.switch_port + " is not a port of " + inv.switch_name);
    if (!used.insert(h.switch_port).second)
      return fail("host " + h.name + ": switch port " + h.switch_port + " is used by another host");
    if (backend.needs_lab && h.nic_ip.empty())
      return fail("host " + h.name + ": backend " + spec.backend +
                  " needs the RoCE address of its NIC (nic: {ip: ...}) to pick its RoCE v2 GID");
  }
  if (inv.mirror_session.empty()) return fail("no mirror session (mirror: session, destination_port)");
  if (!ports.contains(inv.mirror_destination_port))
    return fail("mirror destination " + inv.mirror_destination_port + " is not a port of " + inv.switch_name);
  if (used.contains(inv.mirror_destination_port))
    return fail("mirror destination " + inv.mirror_destination_port + " is a host's port");
  if (inv.capture_host.empty()) return fail("no capture host (capture: host, device)");
  return status::success();
}

}  // namespace rocelab::controller
