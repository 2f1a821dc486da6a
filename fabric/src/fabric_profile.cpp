#include "rocelab/fabric/fabric_profile.hpp"

#include <algorithm>
#include <bit>
#include <string>

namespace rocelab::fabric {

const char* to_string(link_layer l) {
  switch (l) {
    case link_layer::roce: return "roce";
    case link_layer::infiniband: return "infiniband";
    case link_layer::uec: return "uec";
  }
  return "roce";
}

result<link_layer> parse_link_layer(std::string_view text) {
  if (text == "roce" || text == "rocev2") return link_layer::roce;
  if (text == "infiniband" || text == "ib") return link_layer::infiniband;
  if (text == "uec" || text == "ultra_ethernet") return link_layer::uec;
  return status(error_code::invalid_argument, "fabric '" + std::string(text) + "': expects roce, infiniband or uec");
}

const char* to_string(uec_profile p) { return p == uec_profile::htsim ? "htsim" : "rocelab"; }

result<uec_profile> parse_uec_profile(std::string_view text) {
  if (text == "rocelab") return uec_profile::rocelab;
  if (text == "htsim") return uec_profile::htsim;
  return status(error_code::invalid_argument, "uec profile '" + std::string(text) + "': expects rocelab or htsim");
}

result<congestion_control_kind> parse_congestion_control(std::string_view text) {
  if (text == "none") return congestion_control_kind::none;
  if (text == "dcqcn") return congestion_control_kind::dcqcn;
  if (text == "ib_cc") return congestion_control_kind::ib_cc;
  return status(error_code::invalid_argument,
                "congestion control '" + std::string(text) + "': expects none, dcqcn or ib_cc");
}

status fabric_mode::validate() const {
  auto bad = [](const std::string& what) { return status(error_code::invalid_argument, "fabric: " + what); };
  if (link == link_layer::roce && congestion == congestion_control_kind::ib_cc)
    return bad("ib_cc is InfiniBand congestion control; a RoCE fabric takes dcqcn or none");
  if (link == link_layer::infiniband && congestion == congestion_control_kind::dcqcn)
    return bad("dcqcn is RoCEv2 congestion control; an InfiniBand fabric takes ib_cc or none");
  if (link == link_layer::uec && congestion != congestion_control_kind::none)
    return bad(std::string(to_string(congestion)) + " is not a UEC congestion control; a UEC fabric takes uec.nscc and uec.rccc");
  if (link == link_layer::uec) ROCELAB_RETURN_IF_ERROR(uec.validate().with_context("fabric.uec"));
  if (ib_vl_buffer_bytes < 0) return bad("ib_vl_buffer_bytes must be >= 0");
  if (ib_hca_buffer_bytes <= 0) return bad("ib_hca_buffer_bytes must be > 0");
  if (credit_update_interval_ns < 0) return bad("credit_update_interval_ns must be >= 0");
  if (switch_latency_ns < 0) return bad("switch_latency_ns must be >= 0");
  if (congestion == congestion_control_kind::ib_cc) ROCELAB_RETURN_IF_ERROR(ib_cc.validate().with_context("fabric"));
  return status::success();
}

status uec_config::validate() const {
  auto bad = [](const std::string& what) { return status(error_code::invalid_argument, what); };
  if (trim_threshold_bytes < 0) return bad("trim_threshold_bytes must be >= 0");
  if (trim_header_bytes < 1) return bad("trim_header_bytes must be > 0");
  if (trim_priority >= num_priorities) return bad("trim_priority must be 0..7");
  if (nscc_target_qdelay_ns < 0) return bad("nscc_target_qdelay_ns must be >= 0");
  if (rccc_budget_bytes < 0) return bad("rccc_budget_bytes must be >= 0");
  if (retransmit_timeout_ns < 0) return bad("retransmit_timeout_ns must be >= 0");
  if (!(link_frame_loss_rate >= 0 && link_frame_loss_rate < 1)) return bad("link_frame_loss_rate must be in [0, 1)");
  if (credit_flow_control && link_frame_loss_rate > 0 && !link_level_retry)
    return bad("credit_flow_control with link_frame_loss_rate > 0 needs link_level_retry: a lost frame's credits never return");
  return status::success();
}

switch_config infiniband_switch_config(switch_config sc, std::uint8_t vl_mask, const fabric_mode& mode,
                                       std::uint32_t framing_bytes) {
  sc.cell_bytes = ib_credit_block_bytes;
  sc.wire_overhead_bytes = framing_bytes;
  sc.lossless_priorities = vl_mask;
  const auto vls = static_cast<std::int64_t>(std::popcount(vl_mask));
  const auto ports = static_cast<std::int64_t>(std::max<std::size_t>(1, sc.ports.size()));
  std::int64_t vl_bytes = mode.ib_vl_buffer_bytes;
  if (vl_bytes == 0 && vls > 0) vl_bytes = sc.buffer_bytes / (ports * vls);
  vl_bytes = vl_bytes / ib_credit_block_bytes * ib_credit_block_bytes;
  // The buffer holds every VL's allocation (credits promise the space up front).
  sc.buffer_bytes = std::max(sc.buffer_bytes, vl_bytes * ports * vls);
  for (auto& pc : sc.ports) {
    for (int v = 0; v < num_priorities; ++v) {
      auto& pg = pc.pgs[static_cast<std::size_t>(v)];
      pg.reserve_bytes = 0;
      pg.headroom_bytes = 0;
      pg.shared = ((vl_mask >> v) & 1u) ? buffer_threshold::fixed(vl_bytes) : buffer_threshold::fixed(0);
      auto& q = pc.queues[static_cast<std::size_t>(v)];
      q.reserve_bytes = 0;
      q.shared = buffer_threshold::unlimited();
      q.ecn = ecn_config{};  // no ECN on IB; FECN marking is the twin's (Marking_Rate, victims)
    }
  }
  return sc;
}

}  // namespace rocelab::fabric
