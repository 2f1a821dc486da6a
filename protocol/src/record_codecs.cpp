// The run records' field codecs (records.hpp), shared by job_report and trial_result.
// A measured-or-not flag is on the wire only when false, so a soft NIC's records encode
// as they did before the flags existed.
#include "record_codecs.hpp"

#include <vector>

namespace rocelab::protocol {
namespace {

template <typename T, typename F>
json array_of(const std::vector<T>& v, F one) {
  json a = json::array();
  for (const auto& x : v) a.push_back(one(x));
  return a;
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

}  // namespace

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

}  // namespace rocelab::protocol
