#include "rocelab/captures/capture_analysis_json.hpp"

#include "rocelab/captures/capture_summary.hpp"

namespace rocelab::captures {
namespace {

using json = nlohmann::ordered_json;

constexpr std::size_t top_n = 10;

json flow_json(const roce_flow& f) {
  return {{"src", format_ip(f.src)},       {"dst", format_ip(f.dst)},   {"dest_qp", f.dest_qp},
          {"packets", f.packets},          {"bytes", f.bytes},          {"first_ns", f.first_ns},
          {"last_ns", f.last_ns},          {"ce", f.ce},                {"cnp", f.cnp},
          {"retransmits", f.retransmits},  {"psn_rewinds", f.psn_rewinds}};
}

json pause_json(const capture_analysis& a, const pause_interval& p) {
  return {{"port", port_name(a, p)},
          {"priority", p.priority},
          {"start_ns", p.start_ns},
          {"end_ns", p.end_ns},
          {"frames", p.frames}};
}

json flows_at(const capture_analysis& a, const std::vector<std::size_t>& indexes) {
  json out = json::array();
  for (std::size_t i : indexes) out.push_back(flow_json(a.flows[i]));
  return out;
}

}  // namespace

json to_json(const capture_analysis& a, json_lists lists) {
  json by_priority = json::array();
  for (const auto& p : a.pfc.by_priority)
    by_priority.push_back({{"frames", p.frames}, {"xoff", p.xoff}, {"xon", p.xon}, {"quanta", p.quanta}});
  json summary = json::array();
  for (const port_priority_pauses& s : a.pause_summary)
    summary.push_back({{"port", a.ports[s.port]},
                       {"priority", s.priority},
                       {"intervals", s.intervals},
                       {"frames", s.frames},
                       {"paused_ns", s.paused_ns},
                       {"longest_ns", s.longest_ns}});
  json longest = json::array();
  for (const pause_interval& p : a.longest_pause_intervals) longest.push_back(pause_json(a, p));

  const auto& r = a.roce;
  json out = {
      {"frames", a.frames},
      {"malformed", a.malformed},
      {"truncated", a.truncated},
      {"unsupported_link", a.unsupported_link},
      {"roce",
       {{"packets", r.packets},
        {"data", r.data},
        {"ack", r.ack},
        {"nak", r.nak},
        {"rnr_nak", r.rnr_nak},
        {"cnp", r.cnp},
        {"bytes", r.bytes},
        {"ecn", {{"not_ect", r.ecn.not_ect}, {"ect0", r.ecn.ect0}, {"ect1", r.ecn.ect1}, {"ce", r.ecn.ce}}}}},
      {"pfc", {{"frames", a.pfc.frames}, {"by_priority", by_priority}}},
      {"pause", {{"frames", a.pause.frames}, {"quanta", a.pause.quanta}}},
      {"erspan", {{"packets", a.erspan_packets}}},
      {"link_gbps", a.link_gbps},
      {"ports", a.ports},
      {"pause_intervals", a.pause_interval_count},
      {"pause_summary", summary},
      {"longest_pauses", longest},
      {"flow_count", a.flows.size()},
      {"most_retransmits", flows_at(a, flows_by_retransmits(a, top_n))},
      {"most_ce", flows_at(a, flows_by_ce(a, top_n))},
  };
  if (lists.flows) {
    json flows = json::array();
    for (const auto& f : a.flows) flows.push_back(flow_json(f));
    out["flows"] = std::move(flows);
  }
  if (lists.pauses) {
    json pauses = json::array();
    for (const auto& p : a.pauses) pauses.push_back(pause_json(a, p));
    out["pauses"] = std::move(pauses);
  }
  return out;
}

}  // namespace rocelab::captures
