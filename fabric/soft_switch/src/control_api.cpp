#include "rocelab/fabric/soft_switch/control_api.hpp"

#include <limits>

namespace rocelab::fabric::soft_switch {
namespace {

using json = nlohmann::json;

status bad(std::string_view member, std::string_view why) {
  return {error_code::invalid_argument, std::string(member) + ": " + std::string(why)};
}

template <typename T>
status unsigned_member(const json& j, const char* member, T& out, bool required = false) {
  const auto it = j.find(member);
  if (it == j.end()) return required ? bad(member, "missing") : status::success();
  if (!it->is_number_integer() || it->get<std::int64_t>() < 0 ||
      it->get<std::uint64_t>() > std::numeric_limits<T>::max())
    return bad(member, "expected an integer in 0.." + std::to_string(std::numeric_limits<T>::max()));
  out = static_cast<T>(it->get<std::uint64_t>());
  return status::success();
}

status bool_member(const json& j, const char* member, bool& out) {
  const auto it = j.find(member);
  if (it == j.end()) return status::success();
  if (!it->is_boolean()) return bad(member, "expected true or false");
  out = it->get<bool>();
  return status::success();
}

status port_member(const json& j, port_ref& out, bool required = false) {
  const auto it = j.find("port");
  if (it == j.end()) return required ? bad("port", "missing") : status::success();
  if (it->is_number_integer() && it->get<std::int64_t>() >= 0 && it->get<std::int64_t>() < 65536) {
    out.index = it->get<int>();
  } else if (it->is_string() && !it->get<std::string>().empty()) {
    out.name = it->get<std::string>();
  } else {
    return bad("port", "expected a port index or interface name");
  }
  return status::success();
}

status priority_member(const json& j, int& out) {
  const auto it = j.find("priority");
  if (it == j.end()) return status::success();
  if (!it->is_number_integer() || it->get<std::int64_t>() < 0 || it->get<std::int64_t>() > 7)
    return bad("priority", "expected 0..7");
  out = it->get<int>();
  return status::success();
}

status field_member(const json& j, std::string& out) {
  const auto it = j.find("field");
  if (it == j.end() || !it->is_string() || it->get<std::string>().empty())
    return bad("field", "expected a field name (see {\"op\":\"fields\"})");
  out = it->get<std::string>();
  return status::success();
}

result<field_assignment> assignment(const json& j) {
  if (!j.is_object()) return bad("fields", "expected objects");
  field_assignment a;
  ROCELAB_RETURN_IF_ERROR(field_member(j, a.field));
  const auto v = j.find("value");
  if (v == j.end()) return bad("value", "missing");
  a.value = *v;
  ROCELAB_RETURN_IF_ERROR(port_member(j, a.port));
  ROCELAB_RETURN_IF_ERROR(priority_member(j, a.priority));
  return a;
}

status parse_fault(const json& j, fault_spec& f) {
  const auto k = j.find("kind");
  if (k == j.end() || !k->is_string()) return bad("kind", "expected drop, mark, delay or pfc_storm");
  const std::string kind = k->get<std::string>();
  if (kind == "drop" || kind == "mark") {
    f.kind = kind == "drop" ? fault_kind::drop : fault_kind::mark;
    ROCELAB_RETURN_IF_ERROR(unsigned_member(j, "dest_qp", f.dest_qp, true));
    if (f.dest_qp > 0xFFFFFF) return bad("dest_qp", "a QP number has 24 bits");
    ROCELAB_RETURN_IF_ERROR(unsigned_member(j, "nth", f.nth, true));
    if (f.nth == 0) return bad("nth", "counts from 1");
    ROCELAB_RETURN_IF_ERROR(bool_member(j, "every", f.every));
    return port_member(j, f.port);
  }
  if (kind == "delay") {
    f.kind = fault_kind::delay;
    ROCELAB_RETURN_IF_ERROR(port_member(j, f.port, true));
    std::uint64_t d = 0;
    ROCELAB_RETURN_IF_ERROR(unsigned_member(j, "delay_ns", d, true));
    if (d > 10'000'000'000ULL) return bad("delay_ns", "at most 10 s");
    f.delay_ns = static_cast<std::int64_t>(d);
    return status::success();
  }
  if (kind == "pfc_storm") {
    f.kind = fault_kind::pfc_storm;
    ROCELAB_RETURN_IF_ERROR(port_member(j, f.port, true));
    int prio = 3;
    ROCELAB_RETURN_IF_ERROR(priority_member(j, prio));
    f.priority = static_cast<std::uint8_t>(prio);
    ROCELAB_RETURN_IF_ERROR(unsigned_member(j, "quanta", f.quanta));
    std::uint64_t interval = 0;
    ROCELAB_RETURN_IF_ERROR(unsigned_member(j, "interval_ns", interval));
    if (interval != 0 && interval < 1000) return bad("interval_ns", "at least 1000 (or 0 for half the pause time)");
    f.interval_ns = static_cast<std::int64_t>(interval);
    return unsigned_member(j, "count", f.count);
  }
  return bad("kind", "expected drop, mark, delay or pfc_storm, not '" + kind + "'");
}

}  // namespace

result<request> parse_request(std::string_view line) {
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return status(error_code::malformed_input, "request: not JSON");
  if (!j.is_object()) return bad("request", "expected a JSON object");
  const auto op = j.find("op");
  if (op == j.end() || !op->is_string()) return bad("op", "missing");
  const std::string name = op->get<std::string>();
  request r;
  using o = request::op;
  static const std::pair<const char*, o> simple[] = {
      {"ping", o::ping},           {"status", o::status},
      {"fields", o::fields},       {"config", o::config},
      {"counters", o::counters},   {"watermarks", o::watermarks},
      {"reset_counters", o::reset_counters}, {"reset_watermarks", o::reset_watermarks},
      {"prometheus", o::prometheus}, {"faults", o::faults},
      {"queue_samples", o::queue_samples}};
  for (const auto& [n, k] : simple) {
    if (name == n) {
      r.kind = k;
      return r;
    }
  }
  if (name == "get") {
    r.kind = o::get;
    ROCELAB_RETURN_IF_ERROR(field_member(j, r.field));
    ROCELAB_RETURN_IF_ERROR(port_member(j, r.port));
    ROCELAB_RETURN_IF_ERROR(priority_member(j, r.priority));
    return r;
  }
  if (name == "set") {
    r.kind = o::set;
    if (const auto many = j.find("fields"); many != j.end()) {
      if (!many->is_array() || many->empty()) return bad("fields", "expected a non-empty array");
      for (const auto& a : *many) {
        auto parsed = assignment(a);
        if (!parsed) return parsed.error();
        r.assignments.push_back(std::move(*parsed));
      }
      return r;
    }
    auto parsed = assignment(j);
    if (!parsed) return parsed.error();
    r.assignments.push_back(std::move(*parsed));
    return r;
  }
  if (name == "mirror") {
    r.kind = o::mirror;
    if (j.contains("enabled")) {
      bool b = false;
      ROCELAB_RETURN_IF_ERROR(bool_member(j, "enabled", b));
      r.mirror.enabled = b;
    }
    if (const auto d = j.find("direction"); d != j.end()) {
      const std::string s = d->is_string() ? d->get<std::string>() : "";
      if (s == "ingress") r.mirror.direction = mirror_direction::ingress;
      else if (s == "egress") r.mirror.direction = mirror_direction::egress;
      else if (s == "both") r.mirror.direction = mirror_direction::both;
      else return bad("direction", "expected ingress, egress or both");
    }
    if (j.contains("truncate_bytes")) {
      std::uint32_t t = 0;
      ROCELAB_RETURN_IF_ERROR(unsigned_member(j, "truncate_bytes", t));
      if (t != 0 && t < 14) return bad("truncate_bytes", "0 (whole frame) or at least 14");
      r.mirror.truncate_bytes = t;
    }
    if (j.contains("erspan")) {
      std::uint8_t t = 0;
      ROCELAB_RETURN_IF_ERROR(unsigned_member(j, "erspan", t));
      if (t != 0 && t != 2 && t != 3) return bad("erspan", "expected 0 (plain copy), 2 or 3");
      r.mirror.erspan_type = t;
    }
    if (j.contains("session_id")) {
      std::uint16_t s = 0;
      ROCELAB_RETURN_IF_ERROR(unsigned_member(j, "session_id", s));
      if (s > 1023) return bad("session_id", "10 bits (0..1023)");
      r.mirror.session_id = s;
    }
    if (j.contains("pfc_tx")) {
      bool b = false;
      ROCELAB_RETURN_IF_ERROR(bool_member(j, "pfc_tx", b));
      r.mirror.pfc_tx = b;
    }
    if (j.contains("arrivals")) {
      bool b = false;
      ROCELAB_RETURN_IF_ERROR(bool_member(j, "arrivals", b));
      r.mirror.arrivals = b;
    }
    return r;
  }
  if (name == "fault") {
    r.kind = o::fault;
    ROCELAB_RETURN_IF_ERROR(parse_fault(j, r.fault));
    return r;
  }
  if (name == "queue_sampling") {
    r.kind = o::queue_sampling;
    std::uint64_t interval = 0;
    ROCELAB_RETURN_IF_ERROR(unsigned_member(j, "interval_ns", interval, true));
    if (interval != 0 && (interval < 10'000 || interval > 1'000'000'000))
      return bad("interval_ns", "10000..1000000000 ns (or 0 to stop)");
    r.interval_ns = static_cast<std::int64_t>(interval);
    return r;
  }
  if (name == "clear_faults") {
    r.kind = o::clear_faults;
    if (j.contains("id")) {
      std::uint64_t id = 0;
      ROCELAB_RETURN_IF_ERROR(unsigned_member(j, "id", id));
      r.fault_id = id;
    }
    return r;
  }
  return bad("op", "unknown operation '" + name + "'");
}

nlohmann::json error_response(const status& st, std::string_view field) {
  json j = {{"ok", false}, {"error", st.message()}};
  std::string f(field);
  if (f.empty()) {
    const auto colon = st.message().find(':');
    if (colon != std::string::npos && st.message().find(' ') > colon) f = st.message().substr(0, colon);
  }
  if (!f.empty()) j["field"] = f;
  return j;
}

}  // namespace rocelab::fabric::soft_switch
