#include "rocelab/fabric/soft_switch/switch_settings.hpp"

#include <algorithm>
#include <functional>
#include <vector>

namespace rocelab::fabric::soft_switch {
namespace {

using json = nlohmann::json;
using getter = std::function<json(const switch_settings&, std::size_t port, std::size_t prio)>;
using setter = std::function<status(switch_settings&, std::size_t port, std::size_t prio, const json&)>;

struct field_def {
  field_description d;
  getter get;
  setter set;
};

status bad(std::string_view name, std::string_view why) {
  return {error_code::invalid_argument, std::string(name) + ": " + std::string(why)};
}

// An integer field reached through `ref`, a generic lambda returning a reference.
template <typename Ref>
field_def integer(std::string_view name, field_scope scope, std::string_view help, std::int64_t lo, std::int64_t hi,
                  Ref ref) {
  return {{name, scope, help},
          [ref](const switch_settings& s, std::size_t p, std::size_t q) {
            return json(static_cast<std::int64_t>(ref(s, p, q)));
          },
          [ref, name, lo, hi](switch_settings& s, std::size_t p, std::size_t q, const json& v) -> status {
            if (!v.is_number_integer() || v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi)
              return bad(name, "expected an integer in " + std::to_string(lo) + ".." + std::to_string(hi));
            auto& field = ref(s, p, q);
            field = static_cast<std::remove_reference_t<decltype(field)>>(v.get<std::int64_t>());
            return status::success();
          }};
}

template <typename Ref>
field_def boolean(std::string_view name, field_scope scope, std::string_view help, Ref ref) {
  return {{name, scope, help},
          [ref](const switch_settings& s, std::size_t p, std::size_t q) { return json(static_cast<bool>(ref(s, p, q))); },
          [ref, name](switch_settings& s, std::size_t p, std::size_t q, const json& v) -> status {
            if (!v.is_boolean()) return bad(name, "expected true or false");
            ref(s, p, q) = v.get<bool>();
            return status::success();
          }};
}

template <typename Ref>
field_def real(std::string_view name, field_scope scope, std::string_view help, double lo, double hi, Ref ref) {
  return {{name, scope, help},
          [ref](const switch_settings& s, std::size_t p, std::size_t q) { return json(ref(s, p, q)); },
          [ref, name, lo, hi](switch_settings& s, std::size_t p, std::size_t q, const json& v) -> status {
            if (!v.is_number() || v.get<double>() < lo || v.get<double>() > hi)
              return bad(name, "expected a number in " + std::to_string(lo) + ".." + std::to_string(hi));
            ref(s, p, q) = v.get<double>();
            return status::success();
          }};
}

constexpr std::int64_t big = std::int64_t{1} << 40;

// Threshold fields: dynamic_th sets alpha_log2 and the dynamic mode, static_th the bytes
// and the static mode, threshold_mode any of the three.
template <typename Ref>
std::vector<field_def> threshold(std::string_view prefix_dynamic, std::string_view prefix_static,
                                 std::string_view prefix_mode, field_scope scope, Ref ref) {
  std::vector<field_def> out;
  out.push_back({{prefix_dynamic, scope, "log2 of alpha (-7..3), selects the dynamic threshold (SONiC dynamic_th)"},
                 [ref](const switch_settings& s, std::size_t p, std::size_t q) { return json(ref(s, p, q).alpha_log2); },
                 [ref, n = prefix_dynamic](switch_settings& s, std::size_t p, std::size_t q, const json& v) -> status {
                   if (!v.is_number_integer() || v.get<int>() < -7 || v.get<int>() > 3)
                     return bad(n, "expected an integer in -7..3");
                   ref(s, p, q) = buffer_threshold::dynamic(v.get<int>());
                   return status::success();
                 }});
  out.push_back({{prefix_static, scope, "bytes, selects the static threshold (SONiC static_th)"},
                 [ref](const switch_settings& s, std::size_t p, std::size_t q) { return json(ref(s, p, q).fixed_bytes); },
                 [ref, n = prefix_static](switch_settings& s, std::size_t p, std::size_t q, const json& v) -> status {
                   if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > big)
                     return bad(n, "expected a byte count");
                   ref(s, p, q) = buffer_threshold::fixed(v.get<std::int64_t>());
                   return status::success();
                 }});
  out.push_back({{prefix_mode, scope, "dynamic, static or unlimited"},
                 [ref](const switch_settings& s, std::size_t p, std::size_t q) {
                   switch (ref(s, p, q).mode) {
                     case buffer_threshold::kind::dynamic: return json("dynamic");
                     case buffer_threshold::kind::fixed: return json("static");
                     case buffer_threshold::kind::unlimited: break;
                   }
                   return json("unlimited");
                 },
                 [ref, n = prefix_mode](switch_settings& s, std::size_t p, std::size_t q, const json& v) -> status {
                   const std::string m = v.is_string() ? v.get<std::string>() : "";
                   auto& t = ref(s, p, q);
                   if (m == "dynamic") t.mode = buffer_threshold::kind::dynamic;
                   else if (m == "static") t.mode = buffer_threshold::kind::fixed;
                   else if (m == "unlimited") t.mode = buffer_threshold::kind::unlimited;
                   else return bad(n, "expected dynamic, static or unlimited");
                   return status::success();
                 }});
  return out;
}

template <std::size_t N>
field_def table(std::string_view name, std::string_view help, std::array<std::uint8_t, N> priority_map::*member) {
  return {{name, field_scope::global, help},
          [member](const switch_settings& s, std::size_t, std::size_t) { return json((s.classes.*member)); },
          [member, name](switch_settings& s, std::size_t, std::size_t, const json& v) -> status {
            std::array<std::uint8_t, N> t = s.classes.*member;
            if (v.is_array() && v.size() == N) {
              for (std::size_t i = 0; i < N; ++i) {
                if (!v[i].is_number_integer() || v[i].get<int>() < 0 || v[i].get<int>() > 7)
                  return bad(name, "entry " + std::to_string(i) + " must be a traffic class 0..7");
                t[i] = v[i].get<std::uint8_t>();
              }
            } else if (v.is_object()) {  // {"26": 3, ...}: a partial update
              for (const auto& item : v.items()) {
                const std::string& k = item.key();
                const json& tc = item.value();
                std::size_t i = N;
                try { i = std::stoul(k); } catch (...) {}
                if (i >= N) return bad(name, "key '" + k + "' out of range");
                if (!tc.is_number_integer() || tc.get<int>() < 0 || tc.get<int>() > 7)
                  return bad(name, "entry " + k + " must be a traffic class 0..7");
                t[i] = tc.get<std::uint8_t>();
              }
            } else {
              return bad(name, "expected an array of " + std::to_string(N) + " traffic classes or an object");
            }
            s.classes.*member = t;
            return status::success();
          }};
}

const std::vector<field_def>& fields() {
  static const std::vector<field_def> all = [] {
    using fs = field_scope;
    std::vector<field_def> f;
    f.push_back(integer("buffer_bytes", fs::global, "shared buffer size", 1024, big,
                        [](auto& s, auto, auto) -> auto& { return s.model.buffer_bytes; }));
    f.push_back(integer("cell_bytes", fs::global, "buffer accounting cell", 1, 65536,
                        [](auto& s, auto, auto) -> auto& { return s.model.cell_bytes; }));
    f.push_back(integer("lossless_priorities", fs::global, "bit p: priority p is lossless (PFC on; SONiC pfc_enable)",
                        0, 255, [](auto& s, auto, auto) -> auto& { return s.model.lossless_priorities; }));
    f.push_back(integer("pfc.pause_quanta", fs::global, "quanta in XOFF frames (512 bit times each)", 0, 65535,
                        [](auto& s, auto, auto) -> auto& { return s.model.pfc.pause_quanta; }));
    f.push_back(integer("pfc.refresh_interval_ns", fs::global, "XOFF refresh period, 0: half the pause time", 0, big,
                        [](auto& s, auto, auto) -> auto& { return s.model.pfc.refresh_interval_ns; }));
    f.push_back(boolean("pfc.pause_until_resume", fs::global, "received pauses hold until XON",
                        [](auto& s, auto, auto) -> auto& { return s.model.pfc.pause_until_resume; }));
    f.push_back(boolean("pfc.send_xon", fs::global, "send quanta-0 frames on XON",
                        [](auto& s, auto, auto) -> auto& { return s.model.pfc.send_xon; }));
    f.push_back(boolean("pfc.watchdog.enabled", fs::global, "PFC watchdog (SONiC pfcwd) on lossless queues",
                        [](auto& s, auto, auto) -> auto& { return s.model.pfc.watchdog.enabled; }));
    f.push_back(integer("pfc.watchdog.detection_ns", fs::global, "held with packets and no departure this long: storm",
                        1, big, [](auto& s, auto, auto) -> auto& { return s.model.pfc.watchdog.detection_ns; }));
    f.push_back(integer("pfc.watchdog.restoration_ns", fs::global, "no XOFF for this long: storm over", 1, big,
                        [](auto& s, auto, auto) -> auto& { return s.model.pfc.watchdog.restoration_ns; }));
    f.push_back(integer("pfc.watchdog.poll_ns", fs::global, "watchdog check period, 0: detection / 4", 0, big,
                        [](auto& s, auto, auto) -> auto& { return s.model.pfc.watchdog.poll_ns; }));
    f.push_back({{"pfc.watchdog.action", fs::global, "drop, forward or alert (SONiC pfcwd action)"},
                 [](const switch_settings& s, std::size_t, std::size_t) {
                   return json(std::string(to_string(s.model.pfc.watchdog.action)));
                 },
                 [](switch_settings& s, std::size_t, std::size_t, const json& v) -> status {
                   auto a = parse_watchdog_action(v.is_string() ? v.get<std::string>() : "");
                   if (!a) return bad("pfc.watchdog.action", "expected drop, forward or alert");
                   s.model.pfc.watchdog.action = *a;
                   return status::success();
                 }});
    f.push_back(boolean("ecn_mark_on_dequeue", fs::global, "mark at dequeue (HPCC ns-3) instead of enqueue",
                        [](auto& s, auto, auto) -> auto& { return s.model.ecn_mark_on_dequeue; }));
    f.push_back(boolean("strict_low_index_first", fs::global, "strict priority serves queue 0 first",
                        [](auto& s, auto, auto) -> auto& { return s.model.strict_low_index_first; }));
    f.push_back(integer("dwrr_quantum_bytes", fs::global, "DWRR quantum per unit weight", 64, 1 << 20,
                        [](auto& s, auto, auto) -> auto& { return s.model.dwrr_quantum_bytes; }));
    f.push_back(integer("wire_overhead_bytes", fs::global, "preamble+SFD+IFG per frame", 0, 64,
                        [](auto& s, auto, auto) -> auto& { return s.model.wire_overhead_bytes; }));
    f.push_back(integer("ecn_seed", fs::global, "seed of the marking decisions", 0, big,
                        [](auto& s, auto, auto) -> auto& { return s.model.ecn_seed; }));
    f.push_back(boolean("trust_pcp", fs::global, "tagged frames classify by PCP (DOT1P_TO_TC_MAP)",
                        [](auto& s, auto, auto) -> auto& { return s.classes.trust_pcp; }));
    f.push_back(integer("default_tc", fs::global, "traffic class of non-IP untagged frames", 0, 7,
                        [](auto& s, auto, auto) -> auto& { return s.classes.default_tc; }));
    f.push_back(table("dscp_to_tc", "DSCP_TO_TC_MAP: 64 classes, or {\"dscp\": tc, ...}", &priority_map::dscp_to_tc));
    f.push_back(table("pcp_to_tc", "DOT1P_TO_TC_MAP: 8 classes, or {\"pcp\": tc, ...}", &priority_map::pcp_to_tc));
    f.push_back(integer("rate_bps", fs::port, "port speed (the shaper)", 1'000'000, 1'000'000'000'000,
                        [](auto& s, auto p, auto) -> auto& { return s.model.ports[p].rate_bps; }));
    f.push_back(real("cable_m", fs::port, "cable length (headroom arithmetic only)", 0, 100000,
                     [](auto& s, auto p, auto) -> auto& { return s.model.ports[p].cable_m; }));
    f.push_back(integer("pg.reserve_bytes", fs::pg, "guaranteed PG buffer (SONiC size)", 0, big,
                        [](auto& s, auto p, auto q) -> auto& { return s.model.ports[p].pgs[q].reserve_bytes; }));
    f.push_back(integer("pg.headroom_bytes", fs::pg, "lossless headroom (SONiC xoff)", 0, big,
                        [](auto& s, auto p, auto q) -> auto& { return s.model.ports[p].pgs[q].headroom_bytes; }));
    f.push_back(integer("pg.xon_bytes", fs::pg, "fixed XON level, -1: XOFF minus xon_offset (SONiC xon)", -1, big,
                        [](auto& s, auto p, auto q) -> auto& { return s.model.ports[p].pgs[q].xon_bytes; }));
    f.push_back(integer("pg.xon_offset_bytes", fs::pg, "SONiC xon_offset", 0, big,
                        [](auto& s, auto p, auto q) -> auto& { return s.model.ports[p].pgs[q].xon_offset_bytes; }));
    for (auto& d : threshold("pg.dynamic_th", "pg.static_th", "pg.threshold_mode", fs::pg,
                             [](auto& s, auto p, auto q) -> auto& { return s.model.ports[p].pgs[q].shared; }))
      f.push_back(std::move(d));
    f.push_back(integer("queue.reserve_bytes", fs::queue, "guaranteed queue buffer", 0, big,
                        [](auto& s, auto p, auto q) -> auto& { return s.model.ports[p].queues[q].reserve_bytes; }));
    for (auto& d : threshold("queue.dynamic_th", "queue.static_th", "queue.threshold_mode", fs::queue,
                             [](auto& s, auto p, auto q) -> auto& { return s.model.ports[p].queues[q].shared; }))
      f.push_back(std::move(d));
    f.push_back(boolean("queue.ecn.enabled", fs::queue, "ECN marking (WRED_PROFILE ecn)",
                        [](auto& s, auto p, auto q) -> auto& { return s.model.ports[p].queues[q].ecn.enabled; }));
    f.push_back(integer("queue.ecn.kmin_bytes", fs::queue, "marking starts above (WRED green_min_threshold)", 0, big,
                        [](auto& s, auto p, auto q) -> auto& { return s.model.ports[p].queues[q].ecn.kmin_bytes; }));
    f.push_back(integer("queue.ecn.kmax_bytes", fs::queue, "everything marked above (WRED green_max_threshold)", 0,
                        big, [](auto& s, auto p, auto q) -> auto& { return s.model.ports[p].queues[q].ecn.kmax_bytes; }));
    f.push_back(real("queue.ecn.pmax", fs::queue, "probability at kmax (WRED green_drop_probability / 100)", 0, 1,
                     [](auto& s, auto p, auto q) -> auto& { return s.model.ports[p].queues[q].ecn.pmax; }));
    f.push_back(integer("queue.dwrr_weight", fs::queue, "0: strict priority, >0: DWRR weight", 0, 1 << 16,
                        [](auto& s, auto p, auto q) -> auto& { return s.model.ports[p].queues[q].dwrr_weight; }));
    return f;
  }();
  return all;
}

const field_def* find(std::string_view name) {
  for (const auto& f : fields())
    if (f.d.name == name) return &f;
  return nullptr;
}

}  // namespace

std::span<const field_description> settable_fields() {
  static const std::vector<field_description> d = [] {
    std::vector<field_description> out;
    for (const auto& f : fields()) out.push_back(f.d);
    return out;
  }();
  return d;
}

result<json> get_field(const switch_settings& s, std::string_view name, int port, int priority) {
  const field_def* f = find(name);
  if (f == nullptr) return bad(name, "no such field (see {\"op\":\"fields\"})");
  const std::size_t ports = s.model.ports.size();
  if (f->d.scope == field_scope::global) return f->get(s, 0, 0);
  if (port >= static_cast<int>(ports)) return bad("port", "out of range (" + std::to_string(ports) + " ports)");
  auto per_port = [&](std::size_t p) -> json {
    if (f->d.scope == field_scope::port) return f->get(s, p, 0);
    if (priority >= 0) return f->get(s, p, static_cast<std::size_t>(priority));
    json a = json::array();
    for (std::size_t q = 0; q < num_priorities; ++q) a.push_back(f->get(s, p, q));
    return a;
  };
  if (port >= 0) return per_port(static_cast<std::size_t>(port));
  json a = json::array();
  for (std::size_t p = 0; p < ports; ++p) a.push_back(per_port(p));
  return a;
}

status set_field(switch_settings& s, std::string_view name, const json& value, int port, int priority) {
  const field_def* f = find(name);
  if (f == nullptr) return bad(name, "no such field (see {\"op\":\"fields\"})");
  const std::size_t ports = s.model.ports.size();
  if (f->d.scope == field_scope::global) return f->set(s, 0, 0, value);
  if (port >= static_cast<int>(ports)) return bad("port", "out of range (" + std::to_string(ports) + " ports)");
  const std::size_t p0 = port >= 0 ? static_cast<std::size_t>(port) : 0;
  const std::size_t p1 = port >= 0 ? p0 + 1 : ports;
  const bool per_prio = f->d.scope != field_scope::port;
  const std::size_t q0 = per_prio && priority >= 0 ? static_cast<std::size_t>(priority) : 0;
  const std::size_t q1 = per_prio ? (priority >= 0 ? q0 + 1 : num_priorities) : 1;
  for (std::size_t p = p0; p < p1; ++p)
    for (std::size_t q = q0; q < q1; ++q) ROCELAB_RETURN_IF_ERROR(f->set(s, p, q, value));
  return status::success();
}

result<switch_settings> settings_from_json(const json& j) {
  switch_settings s;
  // The port count from any per-port field.
  std::size_t ports = 0;
  for (const auto& f : fields())
    if (f.d.scope != field_scope::global && j.contains(std::string(f.d.name)) && j[std::string(f.d.name)].is_array()) {
      ports = j[std::string(f.d.name)].size();
      break;
    }
  if (ports == 0) return bad("config", "no per-port field: cannot tell how many ports");
  s.model.ports.assign(ports, port_config{});
  for (const auto& f : fields()) {
    const std::string name(f.d.name);
    if (!j.contains(name)) continue;
    const json& v = j[name];
    if (f.d.scope == field_scope::global) {
      ROCELAB_RETURN_IF_ERROR(f.set(s, 0, 0, v));
      continue;
    }
    if (!v.is_array() || v.size() != ports) return bad(name, "expected one entry per port");
    for (std::size_t p = 0; p < ports; ++p) {
      if (f.d.scope == field_scope::port) {
        ROCELAB_RETURN_IF_ERROR(f.set(s, p, 0, v[p]));
        continue;
      }
      if (!v[p].is_array() || v[p].size() != num_priorities) return bad(name, "expected 8 entries per port");
      for (std::size_t q = 0; q < num_priorities; ++q) ROCELAB_RETURN_IF_ERROR(f.set(s, p, q, v[p][q]));
    }
  }
  return s;
}

json to_json(const switch_settings& s) {
  json out = json::object();
  for (const auto& f : fields()) {
    auto v = get_field(s, f.d.name, -1, -1);
    if (v) out[std::string(f.d.name)] = std::move(*v);
  }
  return out;
}

}  // namespace rocelab::fabric::soft_switch

#include "rocelab/fabric/headroom.hpp"

namespace rocelab::fabric::soft_switch {

std::int64_t lab_headroom_bytes(std::int64_t rate_bps, std::int64_t mtu_bytes, std::int64_t response_ns,
                                std::int64_t cell_bytes) {
  headroom_inputs h;
  h.rate_bps = rate_bps;
  h.mtu_bytes = mtu_bytes + 18;
  // One pause quantum is 512 bit times at the port's rate; round the response up.
  const __int128 bits = static_cast<__int128>(std::max<std::int64_t>(0, response_ns)) * rate_bps / 1'000'000'000;
  h.peer_response_quanta = static_cast<std::int64_t>((bits + pause_quantum_bits - 1) / pause_quantum_bits);
  // Whole cells per MTU frame, as the MMU counts them.
  return headroom_cells(h, cell_bytes) * std::max<std::int64_t>(1, cell_bytes);
}

switch_settings lab_default_settings(std::size_t ports, std::int64_t rate_bps, std::int64_t buffer_bytes,
                                     std::int64_t mtu_bytes, std::int64_t response_ns) {
  switch_settings s;
  switch_config& c = s.model;
  c.buffer_bytes = buffer_bytes;
  c.cell_bytes = 256;
  c.lossless_priorities = 1u << 3;
  // Headroom for the whole budget when the buffer allows; otherwise at most half the
  // buffer over all ports (a lab at a high rate with a small buffer still comes up, with
  // less reaction time covered -- lab_covered_response_ns says how much).
  const std::int64_t cap = std::max<std::int64_t>(
      2 * (mtu_bytes + 18), buffer_bytes / 2 / std::max<std::int64_t>(1, static_cast<std::int64_t>(ports)));
  const std::int64_t headroom =
      std::min(lab_headroom_bytes(rate_bps, mtu_bytes, response_ns, c.cell_bytes), cap / c.cell_bytes * c.cell_bytes);
  port_config port;
  port.rate_bps = rate_bps;
  for (int p = 0; p < num_priorities; ++p) {
    port.pgs[p].shared = buffer_threshold::dynamic(0);
    port.queues[p].shared = buffer_threshold::dynamic(0);
  }
  port.pgs[3].headroom_bytes = headroom;
  port.pgs[3].xon_offset_bytes = 2 * (mtu_bytes + 18);
  port.queues[3].shared = buffer_threshold::unlimited();
  port.queues[3].ecn = {true, buffer_bytes / 32, buffer_bytes / 8, 0.2};
  c.ports.assign(ports, port);
  return s;
}

}  // namespace rocelab::fabric::soft_switch
