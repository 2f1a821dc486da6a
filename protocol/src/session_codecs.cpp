// Field codecs of the session's messages: the handshake (hello, welcome), heartbeats, the
// clock exchanges and errors.
#include "body_codecs.hpp"

namespace rocelab::protocol {
namespace {

const char* role_name(peer_role r) { return r == peer_role::agent ? "agent" : "client"; }

}  // namespace

json write_body(const hello& m) {
  return {{"role", role_name(m.role)}, {"name", m.name}, {"transports", m.transports}, {"pid", m.pid}};
}
void read_body(field_reader& r, hello& m) {
  r.get_enum("role", m.role, {{"agent", peer_role::agent}, {"client", peer_role::client}});
  r.get("name", m.name);
  r.get_strings("transports", m.transports);
  r.get("pid", m.pid);
  if (r.ok() && m.role == peer_role::agent && m.name.empty()) r.fail("name", "an agent needs a name");
  if (r.ok() && m.name.size() > 64) r.fail("name", "longer than 64 characters");
}

json write_body(const welcome& m) {
  return {{"session", m.session},       {"heartbeat_interval_ms", m.heartbeat_interval_ms},
          {"deadman_ms", m.deadman_ms}, {"clock_port", m.clock_port},
          {"clock_cookie", m.clock_cookie}};
}
void read_body(field_reader& r, welcome& m) {
  r.get("session", m.session);
  r.get("heartbeat_interval_ms", m.heartbeat_interval_ms);
  r.get("deadman_ms", m.deadman_ms);
  r.get("clock_port", m.clock_port);
  r.get("clock_cookie", m.clock_cookie);
}

json write_body(const heartbeat& m) { return {{"seq", m.seq}}; }
void read_body(field_reader& r, heartbeat& m) { r.get("seq", m.seq); }

json write_body(const clock_probe& m) { return {{"seq", m.seq}, {"t1_ns", m.t1_ns}}; }
void read_body(field_reader& r, clock_probe& m) {
  r.get("seq", m.seq);
  r.get("t1_ns", m.t1_ns);
}

json write_body(const clock_reply& m) {
  json j = {{"seq", m.seq}, {"t1_ns", m.t1_ns}, {"t2_ns", m.t2_ns}, {"t3_ns", m.t3_ns}};
  if (m.host_clock)
    j["host_clock"] = {{"source", m.host_clock->source},
                       {"error_bound_ns", m.host_clock->error_bound_ns},
                       {"realtime_minus_clock_ns", m.host_clock->realtime_minus_clock_ns},
                       {"detail", m.host_clock->detail}};
  return j;
}
void read_body(field_reader& r, clock_reply& m) {
  r.get("seq", m.seq);
  r.get("t1_ns", m.t1_ns);
  r.get("t2_ns", m.t2_ns);
  r.get("t3_ns", m.t3_ns);
  r.get_object_if_present("host_clock", [&m](field_reader& h) {
    host_clock_reading x;
    h.get("source", x.source);
    h.get("error_bound_ns", x.error_bound_ns);
    h.get("realtime_minus_clock_ns", x.realtime_minus_clock_ns);
    h.get("detail", x.detail);
    if (h.ok() && x.source != "none" && x.source != "ptp" && x.source != "ntp")
      h.fail("source", "unknown value '" + x.source + "'");
    if (h.ok() && x.error_bound_ns < 0) h.fail("error_bound_ns", "must not be negative");
    m.host_clock = std::move(x);
  });
}

json write_body(const clock_exchange& m) {
  return {{"t1_ns", m.t1_ns}, {"t2_ns", m.t2_ns}, {"t3_ns", m.t3_ns}, {"t4_ns", m.t4_ns}};
}
void read_body(field_reader& r, clock_exchange& m) {
  r.get("t1_ns", m.t1_ns);
  r.get("t2_ns", m.t2_ns);
  r.get("t3_ns", m.t3_ns);
  r.get("t4_ns", m.t4_ns);
}

json write_body(const error_message& m) { return {{"request", m.request}, {"code", m.code}, {"message", m.message}}; }
void read_body(field_reader& r, error_message& m) {
  r.get("request", m.request);
  r.get("code", m.code);
  r.get("message", m.message);
}

}  // namespace rocelab::protocol
