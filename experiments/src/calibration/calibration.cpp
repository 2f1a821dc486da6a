// The calibration file: YAML through yaml-cpp, whose node marks let every error name the
// line it is on.
#include "rocelab/experiments/calibration/calibration.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "rocelab/common/bounded_file.hpp"

namespace rocelab::experiments {
namespace {

constexpr std::size_t max_calibration_file_bytes = 16u << 20;

status bad(const std::string& source, const YAML::Node& node, const std::string& what) {
  return {error_code::invalid_argument, source + ":" + std::to_string(node.Mark().line + 1) + ": " + what};
}

void emit_delay(YAML::Emitter& out, const char* key, const fabric::delay_quantiles& q) {
  out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << "samples" << YAML::Value << q.samples;
  out << YAML::Key << "quantiles" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (auto v : q.ns) out << v;
  out << YAML::EndSeq << YAML::EndMap;
}

// Reads one scalar of type T from `node[key]`, naming the key and line when it is absent
// or not a T.
template <typename T>
result<T> scalar(const std::string& source, const YAML::Node& node, const char* key, const std::string& where) {
  const auto v = node[key];
  if (!v) return bad(source, node, where + ": " + key + " is missing");
  if (!v.IsScalar()) return bad(source, v, where + "." + key + " is not a value");
  try {
    return v.as<T>();
  } catch (const YAML::Exception&) {
    return bad(source, v, where + "." + key + ": '" + v.Scalar() + "' is not a " +
                              (std::is_same_v<T, std::string> ? "text" : std::is_floating_point_v<T> ? "number" : "whole number"));
  }
}

result<fabric::delay_quantiles> read_delay(const std::string& source, const YAML::Node& parent, const char* key,
                                           const std::string& where) {
  const auto node = parent[key];
  const std::string here = where + "." + key;
  if (!node) return bad(source, parent, where + ": " + key + " is missing");
  if (!node.IsMap()) return bad(source, node, here + " is not a mapping {samples, quantiles}");
  fabric::delay_quantiles q;
  auto samples = scalar<std::uint64_t>(source, node, "samples", here);
  if (!samples) return samples.error();
  q.samples = *samples;
  const auto list = node["quantiles"];
  if (!list || !list.IsSequence() || list.size() != q.ns.size())
    return bad(source, list ? list : node,
               here + ".quantiles must be a list of " + std::to_string(q.ns.size()) +
                   " delays in ns, at the probabilities of quantile_probabilities");
  for (std::size_t i = 0; i < q.ns.size(); ++i) {
    try {
      q.ns[i] = list[i].as<std::int64_t>();
    } catch (const YAML::Exception&) {
      return bad(source, list[i], here + ".quantiles[" + std::to_string(i) + "] is not a whole number of ns");
    }
  }
  if (q.samples > 0 && !q.valid())
    return bad(source, list, here + ".quantiles must be non-negative and non-decreasing");
  if (q.samples == 0) q.ns.fill(0);
  return q;
}

// A list under `key`; absent is empty, anything else but a list is an error.
result<YAML::Node> list_of(const std::string& source, const YAML::Node& root, const char* key) {
  const auto node = root[key];
  if (!node) return YAML::Node(YAML::NodeType::Sequence);
  if (!node.IsSequence()) return bad(source, node, std::string(key) + " is not a list");
  return node;
}

}  // namespace

const host_calibration* calibration::host(const std::string& name) const {
  const auto it = std::find_if(hosts.begin(), hosts.end(), [&](const auto& h) { return h.name == name; });
  return it == hosts.end() ? nullptr : &*it;
}

fabric::delay_quantiles calibration::forwarding_pooled() const {
  // Each port's quantiles weighted by its samples: the pooled distribution's quantile at p
  // is the samples-weighted mean of the ports' (exact when the ports agree, and a mixture's
  // fair summary when they differ by little, as ports of one switch do).
  fabric::delay_quantiles pooled;
  double total = 0;
  std::array<double, fabric::delay_quantiles::probabilities.size()> sum{};
  for (const auto& p : ports) {
    if (p.forwarding.empty()) continue;
    const auto w = static_cast<double>(p.forwarding.samples);
    total += w;
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += w * static_cast<double>(p.forwarding.ns[i]);
  }
  if (total == 0) return pooled;
  for (std::size_t i = 0; i < sum.size(); ++i) pooled.ns[i] = std::llround(sum[i] / total);
  pooled.samples = static_cast<std::uint64_t>(total);
  return pooled;
}

std::string calibration_yaml(const calibration& c) {
  YAML::Emitter out;
  out.SetDoublePrecision(6);  // rates to 1 kb/s at 0.5 Gb/s; probabilities as written
  out << YAML::Comment("rocelab calibration: what `rocelab calibrate` measured of a lab (docs/calibrate.md)");
  out << YAML::BeginMap;
  out << YAML::Key << "rocelab_calibration" << YAML::Value << c.version;
  out << YAML::Key << "lab" << YAML::Value << c.lab;
  out << YAML::Key << "taken_at" << YAML::Value << YAML::DoubleQuoted << c.taken_at;
  out << YAML::Key << "spec" << YAML::Value << c.spec;
  out << YAML::Key << "load" << YAML::Value << c.load;
  out << YAML::Key << "link_gbps" << YAML::Value << c.link_gbps;
  out << YAML::Key << "mtu_bytes" << YAML::Value << c.mtu_bytes;
  out << YAML::Key << "quantile_probabilities" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (double p : fabric::delay_quantiles::probabilities) out << p;
  out << YAML::EndSeq;
  out << YAML::Key << "hosts" << YAML::Value << YAML::BeginSeq;
  for (const auto& h : c.hosts) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << h.name;
    out << YAML::Key << "achieved_gbps" << YAML::Value << h.achieved_gbps;
    emit_delay(out, "send_processing_ns", h.send_processing);
    emit_delay(out, "receive_processing_ns", h.receive_processing);
    if (h.pacing_lateness.samples > 0) emit_delay(out, "pacing_lateness_ns", h.pacing_lateness);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::Key << "pairs" << YAML::Value << YAML::BeginSeq;
  for (const auto& p : c.pairs) {
    out << YAML::BeginMap << YAML::Key << "src" << YAML::Value << p.src << YAML::Key << "dst" << YAML::Value << p.dst;
    emit_delay(out, "base_rtt_ns", p.base_rtt);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::Key << "ports" << YAML::Value << YAML::BeginSeq;
  for (const auto& p : c.ports) {
    out << YAML::BeginMap << YAML::Key << "port" << YAML::Value << p.port;
    emit_delay(out, "forwarding_ns", p.forwarding);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  emit_delay(out, "cnp_loop_ns", c.cnp_loop);
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

result<calibration> parse_calibration(const std::string& text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return status{error_code::invalid_argument, source + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg};
  }
  if (!root.IsMap()) return status{error_code::invalid_argument, source + ": not a rocelab calibration (a mapping)"};
  calibration c;
  auto version = scalar<int>(source, root, "rocelab_calibration", "the file");
  if (!version) return version.error();
  if (*version != calibration_version)
    return bad(source, root["rocelab_calibration"],
               "calibration version " + std::to_string(*version) + "; this rocelab reads version " +
                   std::to_string(calibration_version) + " (take it again with rocelab calibrate)");
  c.version = *version;
  auto lab = scalar<std::string>(source, root, "lab", "the file");
  if (!lab) return lab.error();
  c.lab = *lab;
  auto taken = scalar<std::string>(source, root, "taken_at", "the file");
  if (!taken) return taken.error();
  c.taken_at = *taken;
  if (root["spec"]) {
    auto spec = scalar<std::string>(source, root, "spec", "the file");
    if (!spec) return spec.error();
    c.spec = *spec;
  }
  if (root["load"]) {  // absent in files taken before it was recorded: those were idle
    auto load = scalar<std::string>(source, root, "load", "the file");
    if (!load) return load.error();
    if (*load != calibration_load_idle && *load != calibration_load_workload)
      return bad(source, root["load"],
                 "load '" + *load + "': " + calibration_load_idle + " or " + calibration_load_workload);
    c.load = *load;
  }
  auto gbps = scalar<double>(source, root, "link_gbps", "the file");
  if (!gbps) return gbps.error();
  if (!(*gbps > 0)) return bad(source, root["link_gbps"], "link_gbps must be above 0");
  c.link_gbps = *gbps;
  auto mtu = scalar<std::uint32_t>(source, root, "mtu_bytes", "the file");
  if (!mtu) return mtu.error();
  c.mtu_bytes = *mtu;
  if (const auto probs = root["quantile_probabilities"]) {
    bool same = probs.IsSequence() && probs.size() == fabric::delay_quantiles::probabilities.size();
    for (std::size_t i = 0; same && i < probs.size(); ++i) {
      try {
        same = std::abs(probs[i].as<double>() - fabric::delay_quantiles::probabilities[i]) < 1e-9;
      } catch (const YAML::Exception&) {
        same = false;
      }
    }
    if (!same) return bad(source, probs, "quantile_probabilities differ from the ones this rocelab takes quantiles at");
  }

  auto hosts = list_of(source, root, "hosts");
  if (!hosts) return hosts.error();
  for (std::size_t i = 0; i < hosts->size(); ++i) {
    const auto node = (*hosts)[i];
    const std::string where = "hosts[" + std::to_string(i) + "]";
    if (!node.IsMap()) return bad(source, node, where + " is not a mapping");
    host_calibration h;
    auto name = scalar<std::string>(source, node, "name", where);
    if (!name) return name.error();
    h.name = *name;
    if (c.host(h.name)) return bad(source, node, where + ": host " + h.name + " is listed twice");
    auto rate = scalar<double>(source, node, "achieved_gbps", where);
    if (!rate) return rate.error();
    if (*rate < 0) return bad(source, node["achieved_gbps"], where + ".achieved_gbps must not be negative");
    h.achieved_gbps = *rate;
    auto send = read_delay(source, node, "send_processing_ns", where);
    if (!send) return send.error();
    h.send_processing = *send;
    auto receive = read_delay(source, node, "receive_processing_ns", where);
    if (!receive) return receive.error();
    h.receive_processing = *receive;
    if (node["pacing_lateness_ns"]) {
      auto lateness = read_delay(source, node, "pacing_lateness_ns", where);
      if (!lateness) return lateness.error();
      h.pacing_lateness = *lateness;
    }
    c.hosts.push_back(std::move(h));
  }
  auto pairs = list_of(source, root, "pairs");
  if (!pairs) return pairs.error();
  for (std::size_t i = 0; i < pairs->size(); ++i) {
    const auto node = (*pairs)[i];
    const std::string where = "pairs[" + std::to_string(i) + "]";
    if (!node.IsMap()) return bad(source, node, where + " is not a mapping");
    pair_calibration p;
    auto src = scalar<std::string>(source, node, "src", where);
    if (!src) return src.error();
    auto dst = scalar<std::string>(source, node, "dst", where);
    if (!dst) return dst.error();
    p.src = *src;
    p.dst = *dst;
    auto rtt = read_delay(source, node, "base_rtt_ns", where);
    if (!rtt) return rtt.error();
    p.base_rtt = *rtt;
    c.pairs.push_back(std::move(p));
  }
  auto ports = list_of(source, root, "ports");
  if (!ports) return ports.error();
  for (std::size_t i = 0; i < ports->size(); ++i) {
    const auto node = (*ports)[i];
    const std::string where = "ports[" + std::to_string(i) + "]";
    if (!node.IsMap()) return bad(source, node, where + " is not a mapping");
    port_calibration p;
    auto port = scalar<std::uint32_t>(source, node, "port", where);
    if (!port) return port.error();
    p.port = *port;
    if (std::any_of(c.ports.begin(), c.ports.end(), [&](const auto& q) { return q.port == p.port; }))
      return bad(source, node, where + ": port " + std::to_string(p.port) + " is listed twice");
    auto fwd = read_delay(source, node, "forwarding_ns", where);
    if (!fwd) return fwd.error();
    p.forwarding = *fwd;
    c.ports.push_back(std::move(p));
  }
  if (root["cnp_loop_ns"]) {
    auto loop = read_delay(source, root, "cnp_loop_ns", "the file");
    if (!loop) return loop.error();
    c.cnp_loop = *loop;
  }
  return c;
}

result<calibration> read_calibration_file(const std::string& path) {
  auto text = read_bounded_file(path, max_calibration_file_bytes, "reading calibration file " + path);
  if (!text) return text.error();
  return parse_calibration(*text, path);
}

status write_calibration_file(const calibration& c, const std::string& path, existing_output existing) {
  return write_output_file(path, calibration_yaml(c), existing);
}

}  // namespace rocelab::experiments
