// The run records' codecs (records.hpp), shared by job_report and trial_result. Each
// record goes field by field from its table (record_json.hpp); the totals, which are not
// records, are spelled here. A measured-or-not flag is on the wire only when false, so a
// soft NIC's records encode as they did before the flags existed.
#include "record_codecs.hpp"

#include "record_json.hpp"

#include <vector>

namespace rocelab::protocol {
namespace {

template <typename T, typename F>
json array_of(const std::vector<T>& v, F one) {
  json a = json::array();
  for (const auto& x : v) a.push_back(one(x));
  return a;
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

json flow_json(const flow_record& f) { return record_json(f); }
void read_flow(field_reader& r, flow_record& f) { read_record(r, f); }
json counter_json(const counter_sample& c) { return record_json(c); }
void read_counter(field_reader& r, counter_sample& c) { read_record(r, c); }

json records_json(const run_records& r) {
  return {{"backend", r.backend},
          {"hosts", r.hosts},
          {"devices", r.devices},
          {"flows", array_of(r.flows, flow_json)},
          {"pauses", array_of(r.pauses, record_json<pause_interval>)},
          {"counters", array_of(r.counters, record_json<counter_sample>)},
          {"queues", array_of(r.queues, record_json<queue_sample>)},
          {"allreduce", array_of(r.allreduce, record_json<allreduce_result>)},
          {"events", array_of(r.events, record_json<congestion_event>)},
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
  r.get_objects("pauses", out.pauses, read_record<pause_interval>);
  r.get_objects("counters", out.counters, read_record<counter_sample>);
  r.get_objects("queues", out.queues, read_record<queue_sample>);
  r.get_objects("allreduce", out.allreduce, read_record<allreduce_result>);
  r.get_objects("events", out.events, read_record<congestion_event>);
  r.get_object("totals", [&](field_reader& t) { read_totals(t, out.totals); });
  r.get("simulated_ns", out.simulated_ns);
  r.get_strings("lost_hosts", out.lost_hosts);
  r.get_strings("degraded", out.degraded);
}

}  // namespace rocelab::protocol
