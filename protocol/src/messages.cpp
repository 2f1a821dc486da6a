// Frame and message codec (messages.hpp). The body is JSON because the messages are few,
// small and mostly control; the schema check below is what makes it a contract: each
// message is read through a field_reader that requires every field, checks its type and
// range, and refuses fields it did not ask for.
#include "rocelab/protocol/messages.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <limits>
#include <set>
#include <type_traits>

#include <nlohmann/json.hpp>

namespace rocelab::protocol {
namespace {

using json = nlohmann::json;

// Reads one JSON object against a schema; the first problem wins and names the field.
class field_reader {
 public:
  field_reader(const json& object, std::string context) : object_(object), context_(std::move(context)) {
    if (!object_.is_object()) fail("", "expected a JSON object");
  }

  [[nodiscard]] bool ok() const noexcept { return error_.empty(); }
  [[nodiscard]] status finish() {
    if (ok())
      for (const auto& [key, _] : object_.items())
        if (!seen_.contains(key)) {
          fail(key, "unknown field");
          break;
        }
    if (ok()) return status::success();
    return {error_code::malformed_input, error_};
  }

  template <typename T>
  void get(const char* name, T& out) {
    const json* v = find(name);
    if (!v) return;
    if constexpr (std::is_same_v<T, bool>) {
      if (!v->is_boolean()) return fail(name, "expected true or false");
      out = v->get<bool>();
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (!v->is_string()) return fail(name, "expected a string");
      out = v->get<std::string>();
    } else if constexpr (std::is_same_v<T, double>) {
      if (!v->is_number()) return fail(name, "expected a number");
      out = v->get<double>();
    } else if constexpr (std::is_integral_v<T>) {
      if (v->is_number_unsigned()) {
        const auto u = v->get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) return fail(name, "out of range");
        out = static_cast<T>(u);
      } else if (v->is_number_integer()) {
        const auto s = v->get<std::int64_t>();
        if (s < 0 && std::is_unsigned_v<T>) return fail(name, "must not be negative");
        if constexpr (std::is_signed_v<T>)
          if (s < std::numeric_limits<T>::min() || s > std::numeric_limits<T>::max()) return fail(name, "out of range");
        out = static_cast<T>(s);
      } else {
        return fail(name, "expected an integer");
      }
    } else {
      static_assert(sizeof(T) == 0, "unsupported field type");
    }
  }

  void get_strings(const char* name, std::vector<std::string>& out) {
    const json* v = array(name);
    if (!v) return;
    for (const json& e : *v) {
      if (!e.is_string()) return fail(name, "expected an array of strings");
      out.push_back(e.get<std::string>());
    }
  }

  // An array of objects, each read by `read_one(field_reader&, T&)`.
  template <typename T, typename F>
  void get_objects(const char* name, std::vector<T>& out, F read_one) {
    const json* v = array(name);
    if (!v) return;
    out.reserve(v->size());
    for (std::size_t i = 0; i < v->size(); ++i) {
      field_reader inner((*v)[i], context_ + ": field " + name + "[" + std::to_string(i) + "]");
      T item{};
      if (inner.ok()) read_one(inner, item);
      if (auto st = inner.finish(); !st.ok()) {
        error_ = st.message();
        return;
      }
      out.push_back(std::move(item));
    }
  }

  // A field older peers do not send: read when there, else `out` keeps its default.
  template <typename T>
  void get_if_present(const char* name, T& out) {
    if (ok() && object_.contains(name)) get(name, out);
  }

  // One nested object, read by `read_one(field_reader&)`.
  template <typename F>
  void get_object(const char* name, F read_one) {
    const json* v = find(name);
    if (!v) return;
    field_reader inner(*v, context_ + ": field " + name);
    if (inner.ok()) read_one(inner);
    if (auto st = inner.finish(); !st.ok()) error_ = st.message();
  }

  template <typename E>
  void get_enum(const char* name, E& out, std::initializer_list<std::pair<const char*, E>> names) {
    std::string text;
    get(name, text);
    if (!ok() || !object_.contains(name)) return;
    for (const auto& [n, e] : names)
      if (text == n) {
        out = e;
        return;
      }
    fail(name, "unknown value '" + text + "'");
  }

  void fail(std::string_view field, std::string_view what) {
    if (!error_.empty()) return;
    error_ = context_;
    if (!field.empty()) error_ += ": field " + std::string(field);
    error_ += ": " + std::string(what);
  }

 private:
  const json* find(const char* name) {
    if (!ok()) return nullptr;
    seen_.insert(name);
    auto it = object_.find(name);
    if (it == object_.end()) {
      fail(name, "missing");
      return nullptr;
    }
    return &*it;
  }
  const json* array(const char* name) {
    const json* v = find(name);
    if (v && !v->is_array()) {
      fail(name, "expected an array");
      return nullptr;
    }
    return v;
  }

  const json& object_;
  std::string context_;
  std::string error_;
  std::set<std::string, std::less<>> seen_;
};

const char* role_name(peer_role r) { return r == peer_role::agent ? "agent" : "client"; }

json to_json_setting(const setting& s) { return {{"device", s.device}, {"name", s.name}, {"value", s.value}}; }
void read_setting(field_reader& r, setting& s) {
  r.get("device", s.device);
  r.get("name", s.name);
  r.get("value", s.value);
}
json settings_json(const std::vector<setting>& v) {
  json a = json::array();
  for (const auto& s : v) a.push_back(to_json_setting(s));
  return a;
}

json flow_json(const flow_record& f) {
  json j = {{"src", f.src},         {"dst", f.dst},
            {"qp", f.qp},           {"priority", f.priority},
            {"kind", static_cast<int>(f.kind)},
            {"bytes", f.bytes},     {"start_ns", f.start_ns},
            {"end_ns", f.end_ns},   {"fct_ns", f.fct_ns},
            {"ideal_fct_ns", f.ideal_fct_ns},
            {"retransmits", f.retransmits},
            {"ce_marked", f.ce_marked},
            {"cnps", f.cnps},       {"tag", f.tag}};
  // Only when not measured, so a message about a soft NIC's flow stays as it was.
  if (!f.retransmits_measured) j["retransmits_measured"] = false;
  if (!f.cnps_measured) j["cnps_measured"] = false;
  return j;
}
void read_flow(field_reader& r, flow_record& f) {
  r.get("src", f.src);
  r.get("dst", f.dst);
  r.get("qp", f.qp);
  r.get("priority", f.priority);
  std::uint8_t kind = 0;
  r.get("kind", kind);
  if (kind > static_cast<std::uint8_t>(workload_kind::victim)) r.fail("kind", "unknown workload kind");
  f.kind = static_cast<workload_kind>(kind);
  r.get("bytes", f.bytes);
  r.get("start_ns", f.start_ns);
  r.get("end_ns", f.end_ns);
  r.get("fct_ns", f.fct_ns);
  r.get("ideal_fct_ns", f.ideal_fct_ns);
  r.get("retransmits", f.retransmits);
  r.get("ce_marked", f.ce_marked);
  r.get("cnps", f.cnps);
  r.get("tag", f.tag);
  r.get_if_present("retransmits_measured", f.retransmits_measured);
  r.get_if_present("cnps_measured", f.cnps_measured);
}
json counter_json(const counter_sample& c) {
  return {{"device", c.device}, {"port", c.port}, {"name", c.name}, {"t_ns", c.t_ns}, {"value", c.value}};
}
void read_counter(field_reader& r, counter_sample& c) {
  r.get("device", c.device);
  r.get("port", c.port);
  r.get("name", c.name);
  r.get("t_ns", c.t_ns);
  r.get("value", c.value);
}

json pause_json(const pause_interval& p) {
  return {{"device", p.device}, {"port", p.port}, {"priority", p.priority}, {"start_ns", p.start_ns},
          {"end_ns", p.end_ns}, {"source", static_cast<int>(p.source)}};
}
void read_source(field_reader& r, pause_source& s) {
  std::uint8_t v = 0;
  r.get("source", v);
  if (v > static_cast<std::uint8_t>(pause_source::model)) r.fail("source", "unknown pause source");
  s = static_cast<pause_source>(v);
}
void read_pause(field_reader& r, pause_interval& p) {
  r.get("device", p.device);
  r.get("port", p.port);
  r.get("priority", p.priority);
  r.get("start_ns", p.start_ns);
  r.get("end_ns", p.end_ns);
  read_source(r, p.source);
}
json queue_json(const queue_sample& q) {
  return {{"device", q.device}, {"port", q.port}, {"queue", q.queue}, {"t_ns", q.t_ns}, {"bytes", q.bytes}};
}
void read_queue(field_reader& r, queue_sample& q) {
  r.get("device", q.device);
  r.get("port", q.port);
  r.get("queue", q.queue);
  r.get("t_ns", q.t_ns);
  r.get("bytes", q.bytes);
}
json allreduce_json(const allreduce_result& a) {
  return {{"algorithm", a.algorithm}, {"ranks", a.ranks},           {"bytes", a.bytes},
          {"time_ns", a.time_ns},     {"algbw_gbps", a.algbw_gbps}, {"busbw_gbps", a.busbw_gbps}};
}
void read_allreduce(field_reader& r, allreduce_result& a) {
  r.get("algorithm", a.algorithm);
  r.get("ranks", a.ranks);
  r.get("bytes", a.bytes);
  r.get("time_ns", a.time_ns);
  r.get("algbw_gbps", a.algbw_gbps);
  r.get("busbw_gbps", a.busbw_gbps);
}
json event_json(const congestion_event& e) {
  return {{"kind", static_cast<int>(e.kind)}, {"device", e.device}, {"port", e.port}, {"priority", e.priority},
          {"t_ns", e.t_ns}, {"src", e.src}, {"dst", e.dst}, {"qp", e.qp}, {"source", static_cast<int>(e.source)}};
}
void read_event(field_reader& r, congestion_event& e) {
  std::uint8_t kind = 0;
  r.get("kind", kind);
  if (kind > static_cast<std::uint8_t>(event_kind::drop)) r.fail("kind", "unknown event kind");
  e.kind = static_cast<event_kind>(kind);
  r.get("device", e.device);
  r.get("port", e.port);
  r.get("priority", e.priority);
  r.get("t_ns", e.t_ns);
  r.get("src", e.src);
  r.get("dst", e.dst);
  r.get("qp", e.qp);
  read_source(r, e.source);
}
json totals_json(const run_totals& t) {
  json j = {{"pfc_pause_frames", t.pfc_pause_frames}, {"pfc_resume_frames", t.pfc_resume_frames},
            {"paused_ns", t.paused_ns},               {"ce_marked", t.ce_marked},
            {"cnps", t.cnps},                         {"drops", t.drops},
            {"retransmits", t.retransmits},           {"packets_forwarded", t.packets_forwarded}};
  if (!t.retransmits_measured) j["retransmits_measured"] = false;
  if (!t.cnps_measured) j["cnps_measured"] = false;
  return j;
}
void read_totals(field_reader& r, run_totals& t) {
  r.get("pfc_pause_frames", t.pfc_pause_frames);
  r.get("pfc_resume_frames", t.pfc_resume_frames);
  r.get("paused_ns", t.paused_ns);
  r.get("ce_marked", t.ce_marked);
  r.get("cnps", t.cnps);
  r.get("drops", t.drops);
  r.get("retransmits", t.retransmits);
  r.get("packets_forwarded", t.packets_forwarded);
  r.get_if_present("retransmits_measured", t.retransmits_measured);
  r.get_if_present("cnps_measured", t.cnps_measured);
}
template <typename T, typename F>
json array_of(const std::vector<T>& v, F one) {
  json a = json::array();
  for (const auto& x : v) a.push_back(one(x));
  return a;
}
json records_json(const run_records& r) {
  return {{"backend", r.backend},
          {"hosts", r.hosts},
          {"devices", r.devices},
          {"flows", array_of(r.flows, flow_json)},
          {"pauses", array_of(r.pauses, pause_json)},
          {"counters", array_of(r.counters, counter_json)},
          {"queues", array_of(r.queues, queue_json)},
          {"allreduce", array_of(r.allreduce, allreduce_json)},
          {"events", array_of(r.events, event_json)},
          {"totals", totals_json(r.totals)},
          {"simulated_ns", r.simulated_ns},
          {"lost_hosts", r.lost_hosts},
          {"degraded", r.degraded}};
}
void read_records(field_reader& r, run_records& out) {
  r.get("backend", out.backend);
  r.get_strings("hosts", out.hosts);
  r.get_strings("devices", out.devices);
  r.get_objects("flows", out.flows, read_flow);
  r.get_objects("pauses", out.pauses, read_pause);
  r.get_objects("counters", out.counters, read_counter);
  r.get_objects("queues", out.queues, read_queue);
  r.get_objects("allreduce", out.allreduce, read_allreduce);
  r.get_objects("events", out.events, read_event);
  r.get_object("totals", [&](field_reader& t) { read_totals(t, out.totals); });
  r.get("simulated_ns", out.simulated_ns);
  r.get_strings("lost_hosts", out.lost_hosts);
  r.get_strings("degraded", out.degraded);
}

struct body_encoder {
  json operator()(const hello& m) const {
    return {{"role", role_name(m.role)}, {"name", m.name}, {"transports", m.transports}, {"pid", m.pid}};
  }
  json operator()(const welcome& m) const {
    return {{"session", m.session},       {"heartbeat_interval_ms", m.heartbeat_interval_ms},
            {"deadman_ms", m.deadman_ms}, {"clock_port", m.clock_port},
            {"clock_cookie", m.clock_cookie}};
  }
  json operator()(const clock_exchange& m) const {
    return {{"t1_ns", m.t1_ns}, {"t2_ns", m.t2_ns}, {"t3_ns", m.t3_ns}, {"t4_ns", m.t4_ns}};
  }
  json operator()(const heartbeat& m) const { return {{"seq", m.seq}}; }
  json operator()(const clock_probe& m) const { return {{"seq", m.seq}, {"t1_ns", m.t1_ns}}; }
  json operator()(const clock_reply& m) const {
    json j = {{"seq", m.seq}, {"t1_ns", m.t1_ns}, {"t2_ns", m.t2_ns}, {"t3_ns", m.t3_ns}};
    if (m.host_clock)
      j["host_clock"] = {{"source", m.host_clock->source},
                         {"error_bound_ns", m.host_clock->error_bound_ns},
                         {"realtime_minus_clock_ns", m.host_clock->realtime_minus_clock_ns},
                         {"detail", m.host_clock->detail}};
    return j;
  }
  json operator()(const apply_settings& m) const {
    return {{"request", m.request}, {"driver", m.driver}, {"settings", settings_json(m.settings)}};
  }
  json operator()(const settings_applied& m) const {
    return {{"request", m.request}, {"previous", settings_json(m.previous)}};
  }
  json operator()(const restore_settings& m) const { return {{"request", m.request}}; }
  json operator()(const settings_restored& m) const { return {{"request", m.request}, {"restored", m.restored}}; }
  json operator()(const start_job& m) const {
    json msgs = json::array();
    for (const auto& x : m.messages)
      msgs.push_back({{"dst", x.dst}, {"bytes", x.bytes}, {"offset_ns", x.offset_ns}, {"tag", x.tag}});
    return {{"job", m.job},
            {"run", m.run},
            {"kind", to_string(m.kind)},
            {"start_at_ns", m.start_at_ns},
            {"timeout_ms", m.timeout_ms},
            {"host", m.host},
            {"hosts", m.hosts},
            {"messages", std::move(msgs)},
            {"transport_config", m.transport_config}};
  }
  json operator()(const job_report& m) const {
    json flows = json::array();
    for (const auto& f : m.flows) flows.push_back(flow_json(f));
    json counters = json::array();
    for (const auto& c : m.counters) counters.push_back(counter_json(c));
    return {{"job", m.job},          {"started_ns", m.started_ns}, {"flows", std::move(flows)},
            {"counters", std::move(counters)}, {"done", m.done}, {"error", m.error}};
  }
  json operator()(const stop_job& m) const { return {{"job", m.job}}; }
  json operator()(const nic_command& m) const { return {{"job", m.job}, {"lines", m.lines}}; }
  json operator()(const nic_event& m) const { return {{"job", m.job}, {"lines", m.lines}}; }
  json operator()(const submit_run& m) const {
    return {{"request", m.request},         {"spec_yaml", m.spec_yaml},   {"source_name", m.source_name},
            {"sets", m.sets},               {"submission", m.submission}, {"retry", m.retry}};
  }
  json operator()(const run_finished& m) const {
    return {{"request", m.request},
            {"run", m.run},
            {"status", m.status},
            {"error", m.error},
            {"summary_json", m.summary_json}};
  }
  json operator()(const error_message& m) const {
    return {{"request", m.request}, {"code", m.code}, {"message", m.message}};
  }
  json operator()(const register_worker& m) const {
    return {{"name", m.name},
            {"host", m.host},
            {"pid", m.pid},
            {"capabilities", m.capabilities},
            {"threads", m.threads},
            {"slurm_job_id", m.slurm_job_id},
            {"slurm_array_task_id", m.slurm_array_task_id},
            {"slurm_node", m.slurm_node}};
  }
  json operator()(const trial_assignment& m) const {
    return {{"trial", m.trial}, {"attempt", m.attempt}, {"spec_yaml", m.spec_yaml}, {"source_name", m.source_name}};
  }
  json operator()(const trial_result& m) const {
    json repeats = json::array();
    for (const auto& r : m.repeats)
      repeats.push_back({{"index", r.index}, {"seed", r.seed}, {"records", records_json(r.records)}});
    return {{"trial", m.trial},
            {"attempt", m.attempt},
            {"error", m.error},
            {"repeats", std::move(repeats)},
            {"done", m.done}};
  }
};

result<message> decode_json(message_type type, const json& body) {
  field_reader r(body, std::string("message ") + to_string(type));
  message out;
  switch (type) {
    case message_type::hello: {
      hello m;
      r.get_enum("role", m.role, {{"agent", peer_role::agent}, {"client", peer_role::client}});
      r.get("name", m.name);
      r.get_strings("transports", m.transports);
      r.get("pid", m.pid);
      if (r.ok() && m.role == peer_role::agent && m.name.empty()) r.fail("name", "an agent needs a name");
      if (r.ok() && m.name.size() > 64) r.fail("name", "longer than 64 characters");
      out = std::move(m);
      break;
    }
    case message_type::welcome: {
      welcome m;
      r.get("session", m.session);
      r.get("heartbeat_interval_ms", m.heartbeat_interval_ms);
      r.get("deadman_ms", m.deadman_ms);
      r.get("clock_port", m.clock_port);
      r.get("clock_cookie", m.clock_cookie);
      out = std::move(m);
      break;
    }
    case message_type::clock_exchange: {
      clock_exchange m;
      r.get("t1_ns", m.t1_ns);
      r.get("t2_ns", m.t2_ns);
      r.get("t3_ns", m.t3_ns);
      r.get("t4_ns", m.t4_ns);
      out = m;
      break;
    }
    case message_type::heartbeat: {
      heartbeat m;
      r.get("seq", m.seq);
      out = m;
      break;
    }
    case message_type::clock_probe: {
      clock_probe m;
      r.get("seq", m.seq);
      r.get("t1_ns", m.t1_ns);
      out = m;
      break;
    }
    case message_type::clock_reply: {
      clock_reply m;
      r.get("seq", m.seq);
      r.get("t1_ns", m.t1_ns);
      r.get("t2_ns", m.t2_ns);
      r.get("t3_ns", m.t3_ns);
      if (r.ok() && body.contains("host_clock"))
        r.get_object("host_clock", [&m](field_reader& h) {
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
      out = std::move(m);
      break;
    }
    case message_type::apply_settings: {
      apply_settings m;
      r.get("request", m.request);
      r.get("driver", m.driver);
      r.get_objects("settings", m.settings, read_setting);
      out = std::move(m);
      break;
    }
    case message_type::settings_applied: {
      settings_applied m;
      r.get("request", m.request);
      r.get_objects("previous", m.previous, read_setting);
      out = std::move(m);
      break;
    }
    case message_type::restore_settings: {
      restore_settings m;
      r.get("request", m.request);
      out = m;
      break;
    }
    case message_type::settings_restored: {
      settings_restored m;
      r.get("request", m.request);
      r.get("restored", m.restored);
      out = m;
      break;
    }
    case message_type::start_job: {
      start_job m;
      r.get("job", m.job);
      r.get("run", m.run);
      r.get_enum("kind", m.kind, {{"timer", job_kind::timer}, {"soft", job_kind::soft}, {"verbs", job_kind::verbs}});
      r.get("start_at_ns", m.start_at_ns);
      r.get("timeout_ms", m.timeout_ms);
      r.get("host", m.host);
      r.get_strings("hosts", m.hosts);
      r.get_objects("messages", m.messages, [](field_reader& f, job_message& x) {
        f.get("dst", x.dst);
        f.get("bytes", x.bytes);
        f.get("offset_ns", x.offset_ns);
        f.get("tag", x.tag);
      });
      r.get("transport_config", m.transport_config);
      if (r.ok() && m.timeout_ms <= 0) r.fail("timeout_ms", "must be positive");
      if (r.ok() && !m.hosts.empty() && m.host >= m.hosts.size()) r.fail("host", "not an index into hosts");
      if (r.ok())
        for (const auto& x : m.messages)
          if (x.dst >= m.hosts.size()) {
            r.fail("messages", "dst " + std::to_string(x.dst) + " is not an index into hosts");
            break;
          }
      out = std::move(m);
      break;
    }
    case message_type::job_report: {
      job_report m;
      r.get("job", m.job);
      r.get("started_ns", m.started_ns);
      r.get_objects("flows", m.flows, read_flow);
      r.get_objects("counters", m.counters, read_counter);
      r.get("done", m.done);
      r.get("error", m.error);
      out = std::move(m);
      break;
    }
    case message_type::stop_job: {
      stop_job m;
      r.get("job", m.job);
      out = m;
      break;
    }
    case message_type::nic_command:
    case message_type::nic_event: {
      std::uint64_t job = 0;
      std::vector<std::string> lines;
      r.get("job", job);
      r.get_strings("lines", lines);
      if (r.ok() && lines.size() > max_lines_per_relay)
        r.fail("lines", std::to_string(lines.size()) + " lines exceed the limit of " +
                            std::to_string(max_lines_per_relay));
      if (type == message_type::nic_command)
        out = nic_command{job, std::move(lines)};
      else
        out = nic_event{job, std::move(lines)};
      break;
    }
    case message_type::submit_run: {
      submit_run m;
      r.get("request", m.request);
      r.get("spec_yaml", m.spec_yaml);
      r.get("source_name", m.source_name);
      r.get_strings("sets", m.sets);
      r.get("submission", m.submission);
      r.get("retry", m.retry);
      if (r.ok() && !valid_submission_id(m.submission))
        r.fail("submission", "expected up to " + std::to_string(max_submission_id_chars) + " of [A-Za-z0-9_-]");
      out = std::move(m);
      break;
    }
    case message_type::run_finished: {
      run_finished m;
      r.get("request", m.request);
      r.get("run", m.run);
      r.get("status", m.status);
      r.get("error", m.error);
      r.get("summary_json", m.summary_json);
      out = std::move(m);
      break;
    }
    case message_type::error: {
      error_message m;
      r.get("request", m.request);
      r.get("code", m.code);
      r.get("message", m.message);
      out = std::move(m);
      break;
    }
    case message_type::register_worker: {
      register_worker m;
      r.get("name", m.name);
      r.get("host", m.host);
      r.get("pid", m.pid);
      r.get_strings("capabilities", m.capabilities);
      r.get("threads", m.threads);
      r.get("slurm_job_id", m.slurm_job_id);
      r.get("slurm_array_task_id", m.slurm_array_task_id);
      r.get("slurm_node", m.slurm_node);
      if (r.ok() && (m.name.empty() || m.name.size() > 128)) r.fail("name", "expected 1 to 128 characters");
      if (r.ok() && m.threads == 0) r.fail("threads", "must be at least 1");
      out = std::move(m);
      break;
    }
    case message_type::trial_assignment: {
      trial_assignment m;
      r.get("trial", m.trial);
      r.get("attempt", m.attempt);
      r.get("spec_yaml", m.spec_yaml);
      r.get("source_name", m.source_name);
      if (r.ok() && m.attempt == 0) r.fail("attempt", "must be at least 1");
      out = std::move(m);
      break;
    }
    case message_type::trial_result: {
      trial_result m;
      r.get("trial", m.trial);
      r.get("attempt", m.attempt);
      r.get("error", m.error);
      r.get_objects("repeats", m.repeats, [](field_reader& f, trial_repeat& x) {
        f.get("index", x.index);
        f.get("seed", x.seed);
        f.get_object("records", [&](field_reader& rr) { read_records(rr, x.records); });
      });
      r.get("done", m.done);
      out = std::move(m);
      break;
    }
    default:
      return status(error_code::malformed_input, "unknown message type " + std::to_string(static_cast<int>(type)));
  }
  if (auto st = r.finish(); !st.ok()) return st;
  return out;
}

bool known_type(std::uint16_t t) {
  switch (static_cast<message_type>(t)) {
    case message_type::hello:
    case message_type::welcome:
    case message_type::heartbeat:
    case message_type::clock_probe:
    case message_type::clock_reply:
    case message_type::clock_exchange:
    case message_type::apply_settings:
    case message_type::settings_applied:
    case message_type::start_job:
    case message_type::job_report:
    case message_type::restore_settings:
    case message_type::settings_restored:
    case message_type::stop_job:
    case message_type::nic_command:
    case message_type::nic_event:
    case message_type::submit_run:
    case message_type::run_finished:
    case message_type::error:
    case message_type::register_worker:
    case message_type::trial_assignment:
    case message_type::trial_result: return true;
  }
  return false;
}


}  // namespace

namespace {

template <typename T>
void take_slice(std::vector<T>& from, std::size_t& at, std::size_t n, std::vector<T>& to) {
  const std::size_t end = std::min(from.size(), at + n);
  to.assign(std::make_move_iterator(from.begin() + static_cast<std::ptrdiff_t>(at)),
            std::make_move_iterator(from.begin() + static_cast<std::ptrdiff_t>(end)));
  at = end;
}

template <typename T>
void append_all(std::vector<T>& to, std::vector<T>& from) {
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

}  // namespace

std::vector<trial_result> split_trial_result(trial_result r, std::size_t max_items) {
  max_items = std::max<std::size_t>(1, max_items);
  std::vector<trial_result> out;
  for (trial_repeat& rep : r.repeats) {
    run_records& all = rep.records;
    std::size_t flows = 0, pauses = 0, counters = 0, queues = 0, allreduce = 0, events = 0;
    for (bool first = true;; first = false) {
      trial_result piece{r.trial, r.attempt, "", {}, false};
      trial_repeat part;
      part.index = rep.index;
      part.seed = rep.seed;
      if (first) {  // the scalar fields travel once, with the first slice
        part.records.backend = all.backend;
        part.records.hosts = std::move(all.hosts);
        part.records.devices = std::move(all.devices);
        part.records.totals = all.totals;
        part.records.simulated_ns = all.simulated_ns;
        part.records.lost_hosts = std::move(all.lost_hosts);
        part.records.degraded = std::move(all.degraded);
      }
      take_slice(all.flows, flows, max_items, part.records.flows);
      take_slice(all.pauses, pauses, max_items, part.records.pauses);
      take_slice(all.counters, counters, max_items, part.records.counters);
      take_slice(all.queues, queues, max_items, part.records.queues);
      take_slice(all.allreduce, allreduce, max_items, part.records.allreduce);
      take_slice(all.events, events, max_items, part.records.events);
      piece.repeats.push_back(std::move(part));
      out.push_back(std::move(piece));
      if (flows == all.flows.size() && pauses == all.pauses.size() && counters == all.counters.size() &&
          queues == all.queues.size() && allreduce == all.allreduce.size() && events == all.events.size())
        break;
    }
  }
  if (out.empty()) out.push_back(trial_result{r.trial, r.attempt, "", {}, false});
  out.front().error = r.error;
  out.back().done = true;
  return out;
}

void append_trial_piece(trial_result& into, trial_result piece) {
  if (!piece.error.empty()) into.error = piece.error;
  into.done = piece.done;
  for (trial_repeat& part : piece.repeats) {
    if (into.repeats.empty() || into.repeats.back().index != part.index) {
      into.repeats.push_back(std::move(part));
      continue;
    }
    run_records& to = into.repeats.back().records;
    append_all(to.flows, part.records.flows);
    append_all(to.pauses, part.records.pauses);
    append_all(to.counters, part.records.counters);
    append_all(to.queues, part.records.queues);
    append_all(to.allreduce, part.records.allreduce);
    append_all(to.events, part.records.events);
  }
}

bool valid_submission_id(std::string_view id) noexcept {
  if (id.size() > max_submission_id_chars) return false;
  for (const char c : id)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
      return false;
  return true;
}

const char* to_string(message_type t) noexcept {
  switch (t) {
    case message_type::hello: return "hello";
    case message_type::welcome: return "welcome";
    case message_type::heartbeat: return "heartbeat";
    case message_type::clock_probe: return "clock_probe";
    case message_type::clock_reply: return "clock_reply";
    case message_type::clock_exchange: return "clock_exchange";
    case message_type::apply_settings: return "apply_settings";
    case message_type::settings_applied: return "settings_applied";
    case message_type::start_job: return "start_job";
    case message_type::job_report: return "job_report";
    case message_type::restore_settings: return "restore_settings";
    case message_type::settings_restored: return "settings_restored";
    case message_type::stop_job: return "stop_job";
    case message_type::nic_command: return "nic_command";
    case message_type::nic_event: return "nic_event";
    case message_type::submit_run: return "submit_run";
    case message_type::run_finished: return "run_finished";
    case message_type::error: return "error";
    case message_type::register_worker: return "register_worker";
    case message_type::trial_assignment: return "trial_assignment";
    case message_type::trial_result: return "trial_result";
  }
  return "unknown";
}

const char* to_string(job_kind k) noexcept {
  switch (k) {
    case job_kind::timer: return "timer";
    case job_kind::soft: return "soft";
    case job_kind::verbs: return "verbs";
  }
  return "timer";
}

message_type type_of(const message& m) noexcept {
  static constexpr message_type by_index[] = {
      message_type::hello,          message_type::welcome,          message_type::heartbeat,
      message_type::clock_probe,    message_type::clock_reply,      message_type::apply_settings,
      message_type::settings_applied, message_type::start_job,      message_type::job_report,
      message_type::restore_settings, message_type::settings_restored, message_type::stop_job,
      message_type::submit_run,     message_type::run_finished,     message_type::error,
      message_type::nic_command,    message_type::nic_event,        message_type::register_worker,
      message_type::trial_assignment, message_type::trial_result,  message_type::clock_exchange};
  static_assert(std::size(by_index) == std::variant_size_v<message>);
  return by_index[m.index()];
}

result<frame_header> parse_header(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < frame_header_bytes)
    return status(error_code::malformed_input,
                  "frame header: " + std::to_string(bytes.size()) + " of " + std::to_string(frame_header_bytes) + " bytes");
  frame_header_wire w;
  std::memcpy(&w, bytes.data(), sizeof w);
  frame_header h;
  h.body_bytes = w.body_bytes.value();
  h.version = w.version.value();
  const std::uint16_t type = w.type.value();
  if (h.version != protocol_version)
    return status(error_code::unsupported, "frame header: protocol version " + std::to_string(h.version) +
                                               " (this side speaks " + std::to_string(protocol_version) + ")");
  if (!known_type(type))
    return status(error_code::malformed_input, "frame header: unknown message type " + std::to_string(type));
  h.type = static_cast<message_type>(type);
  if (h.body_bytes == 0) return status(error_code::malformed_input, "frame header: empty body");
  if (h.body_bytes > max_body_bytes)
    return status(error_code::resource_exhausted, "frame header: body of " + std::to_string(h.body_bytes) +
                                                      " bytes exceeds the limit of " + std::to_string(max_body_bytes));
  return h;
}

result<message> decode_body(message_type type, std::span<const std::uint8_t> body) {
  // No exceptions out of the parser: a malformed body is a normal input.
  json parsed = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded())
    return status(error_code::malformed_input, std::string("message ") + to_string(type) + ": body is not valid JSON");
  return decode_json(type, parsed);
}

result<message> decode_frame(std::span<const std::uint8_t> frame) {
  auto h = parse_header(frame);
  if (!h) return h.error();
  const std::size_t total = frame_header_bytes + h->body_bytes;
  if (frame.size() < total)
    return status(error_code::malformed_input, "frame: body truncated at " + std::to_string(frame.size() - frame_header_bytes) +
                                                   " of " + std::to_string(h->body_bytes) + " bytes");
  if (frame.size() > total)
    return status(error_code::malformed_input, "frame: " + std::to_string(frame.size() - total) + " bytes after the body");
  return decode_body(h->type, frame.subspan(frame_header_bytes, h->body_bytes));
}

result<std::vector<std::uint8_t>> encode(const message& m) {
  const json body = std::visit(body_encoder{}, m);
  // Invalid UTF-8 in a string is replaced rather than thrown on: names come from peers.
  const std::string text = body.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > max_body_bytes)
    return status(error_code::resource_exhausted, std::string("encoding ") + to_string(type_of(m)) + ": body of " +
                                                      std::to_string(text.size()) + " bytes exceeds the limit");
  std::vector<std::uint8_t> out(frame_header_bytes + text.size());
  frame_header_wire w;
  w.body_bytes.set(static_cast<std::uint32_t>(text.size()));
  w.version.set(protocol_version);
  w.type.set(static_cast<std::uint16_t>(type_of(m)));
  std::memcpy(out.data(), &w, sizeof w);
  std::memcpy(out.data() + frame_header_bytes, text.data(), text.size());
  return out;
}

}  // namespace rocelab::protocol
