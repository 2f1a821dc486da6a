#include "rocelab/captures/capture_analysis_json.hpp"

namespace rocelab::captures {

nlohmann::ordered_json to_json(const capture_analysis& a) {
  using json = nlohmann::ordered_json;
  json by_priority = json::array();
  for (const auto& p : a.pfc.by_priority)
    by_priority.push_back({{"frames", p.frames}, {"xoff", p.xoff}, {"xon", p.xon}, {"quanta", p.quanta}});

  json flows = json::array();
  for (const auto& f : a.flows) {
    flows.push_back({{"src", format_ip(f.src)},
                     {"dst", format_ip(f.dst)},
                     {"dest_qp", f.dest_qp},
                     {"packets", f.packets},
                     {"bytes", f.bytes},
                     {"first_ns", f.first_ns},
                     {"last_ns", f.last_ns},
                     {"ce", f.ce},
                     {"cnp", f.cnp},
                     {"retransmits", f.retransmits},
                     {"psn_rewinds", f.psn_rewinds}});
  }
  json pauses = json::array();
  for (const auto& p : a.pauses) {
    pauses.push_back({{"port", p.port},
                      {"priority", p.priority},
                      {"start_ns", p.start_ns},
                      {"end_ns", p.end_ns},
                      {"frames", p.frames}});
  }
  const auto& r = a.roce;
  return {
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
      {"flows", flows},
      {"pauses", pauses},
  };
}

}  // namespace rocelab::captures
