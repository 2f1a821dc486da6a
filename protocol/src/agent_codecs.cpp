// Field codecs of what the controller and an agent say about a run's hosts: NIC settings
// (apply, restore), traffic jobs (start, report, stop) and the soft NIC's relayed lines.
#include <string>
#include <vector>

#include "body_codecs.hpp"
#include "record_codecs.hpp"

namespace rocelab::protocol {
namespace {

json setting_json(const setting& s) { return {{"device", s.device}, {"name", s.name}, {"value", s.value}}; }
void read_setting(field_reader& r, setting& s) {
  r.get("device", s.device);
  r.get("name", s.name);
  r.get("value", s.value);
}
json settings_json(const std::vector<setting>& v) {
  json a = json::array();
  for (const auto& s : v) a.push_back(setting_json(s));
  return a;
}

// nic_command and nic_event share a schema: the job and its lines, at most
// max_lines_per_relay of them.
void read_relay(field_reader& r, std::uint64_t& job, std::vector<std::string>& lines) {
  r.get("job", job);
  r.get_strings("lines", lines);
  if (r.ok() && lines.size() > max_lines_per_relay)
    r.fail("lines", std::to_string(lines.size()) + " lines exceed the limit of " + std::to_string(max_lines_per_relay));
}

}  // namespace

const char* to_string(job_kind k) noexcept {
  switch (k) {
    case job_kind::timer: return "timer";
    case job_kind::soft: return "soft";
    case job_kind::verbs: return "verbs";
  }
  return "timer";
}

json write_body(const apply_settings& m) {
  return {{"request", m.request}, {"driver", m.driver}, {"settings", settings_json(m.settings)}};
}
void read_body(field_reader& r, apply_settings& m) {
  r.get("request", m.request);
  r.get("driver", m.driver);
  r.get_objects("settings", m.settings, read_setting);
}

json write_body(const settings_applied& m) { return {{"request", m.request}, {"previous", settings_json(m.previous)}}; }
void read_body(field_reader& r, settings_applied& m) {
  r.get("request", m.request);
  r.get_objects("previous", m.previous, read_setting);
}

json write_body(const restore_settings& m) { return {{"request", m.request}}; }
void read_body(field_reader& r, restore_settings& m) { r.get("request", m.request); }

json write_body(const settings_restored& m) { return {{"request", m.request}, {"restored", m.restored}}; }
void read_body(field_reader& r, settings_restored& m) {
  r.get("request", m.request);
  r.get("restored", m.restored);
}

json write_body(const start_job& m) {
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
void read_body(field_reader& r, start_job& m) {
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
}

json write_body(const job_report& m) {
  json flows = json::array();
  for (const auto& f : m.flows) flows.push_back(flow_json(f));
  json counters = json::array();
  for (const auto& c : m.counters) counters.push_back(counter_json(c));
  return {{"job", m.job},          {"started_ns", m.started_ns}, {"flows", std::move(flows)},
          {"counters", std::move(counters)}, {"done", m.done}, {"error", m.error}};
}
void read_body(field_reader& r, job_report& m) {
  r.get("job", m.job);
  r.get("started_ns", m.started_ns);
  r.get_objects("flows", m.flows, read_flow);
  r.get_objects("counters", m.counters, read_counter);
  r.get("done", m.done);
  r.get("error", m.error);
}

json write_body(const stop_job& m) { return {{"job", m.job}}; }
void read_body(field_reader& r, stop_job& m) { r.get("job", m.job); }

json write_body(const nic_command& m) { return {{"job", m.job}, {"lines", m.lines}}; }
void read_body(field_reader& r, nic_command& m) { read_relay(r, m.job, m.lines); }

json write_body(const nic_event& m) { return {{"job", m.job}, {"lines", m.lines}}; }
void read_body(field_reader& r, nic_event& m) { read_relay(r, m.job, m.lines); }

}  // namespace rocelab::protocol
