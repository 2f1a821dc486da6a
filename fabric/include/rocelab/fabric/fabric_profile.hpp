#pragma once
// Which fabric a run models: RoCEv2 (Ethernet + PFC + DCQCN) or InfiniBand (credits per
// VL, IB headers, IB congestion control), with the routing, congestion control and switch
// class as independent choices, and the switch profile a decision report prices.
//
// `fabric_mode` is what the twin reads (twin_config::fabric); `switch_profile` is the
// user-editable description of a switch class (examples/fabric-profiles/*.yaml) that the
// compare experiment turns into a fabric_mode plus switch settings. Plain data.

#include <cstdint>
#include <bit>
#include <string>
#include <string_view>

#include "rocelab/common/result.hpp"
#include "rocelab/fabric/adaptive_routing.hpp"
#include "rocelab/fabric/credit_flow_control.hpp"
#include "rocelab/fabric/ib_congestion_control.hpp"
#include "rocelab/fabric/switch_config.hpp"
#include "rocelab/fabric/uec_load_balancing.hpp"

namespace rocelab::fabric {

// uec: Ultra Ethernet (UEC 1.0): Ethernet links without PFC by default, switches that
// trim, a transport that sprays and tolerates reordering, NSCC/RCCC (uec_config).
enum class link_layer : std::uint8_t { roce, infiniband, uec };
[[nodiscard]] const char* to_string(link_layer l);
[[nodiscard]] result<link_layer> parse_link_layer(std::string_view text);  // "roce" | "infiniband" | "ib" | "uec"
[[nodiscard]] result<congestion_control_kind> parse_congestion_control(std::string_view text);

// Where a UEC fabric's derived constants come from. rocelab: the twin's own defaults (each
// field below as given, 0 meaning the twin derives it, switch queues as the switch
// template sets them). htsim: as UEC's own simulator, htsim_uec, derives them from the
// fabric's BDP (uec_htsim_profile.hpp): every switch queue a fixed size of 1 BDP with
// trimming, 5 without, ECN from 0.2 to 0.8 BDP, trimming at the queue size, its minimum
// RTO, no preamble or gap on the wire, and NSCC's base RTT learnt as htsim learns it.
enum class uec_profile : std::uint8_t { rocelab, htsim };
[[nodiscard]] const char* to_string(uec_profile p);
[[nodiscard]] result<uec_profile> parse_uec_profile(std::string_view text);  // "rocelab" | "htsim"

// The Ultra Ethernet transport and switch options (fabric_mode::link == uec).
struct uec_config {
  uec_profile profile = uec_profile::rocelab;
  load_balancing balancing = load_balancing::reps;
  bool nscc = true;   // sender window (uec_congestion_control.hpp)
  bool rccc = false;  // receiver credits
  // Switches trim data past trim_threshold_bytes per egress queue (0: the queue's share
  // of the buffer decides: trimmed where it would be dropped).
  bool trimming = true;
  std::int64_t trim_threshold_bytes = 0;
  std::uint32_t trim_header_bytes = 64;
  std::uint8_t trim_priority = 7;        // trimmed headers, ACKs, NACKs and credits
  std::int64_t nscc_target_qdelay_ns = 0;  // 0: NSCC's default (nscc_config)
  std::int64_t rccc_budget_bytes = 0;      // per receiver; 0: one BDP of its link
  // Retransmission timeout of a packet not acknowledged; 0: adaptive per flow (RFC 6298:
  // smoothed RTT + 4 x its variation), at least 4 network RTTs and at least 50 us.
  std::int64_t retransmit_timeout_ns = 0;
  // Credit-based link-level flow control on every link (UEC 1.0 CBFC) in place of
  // dropping or trimming at a full buffer: the InfiniBand credit machinery
  // (credit_flow_control.hpp) on Ethernet framing.
  bool credit_flow_control = false;
  // Link frame loss (bit errors): each frame that carries a transport packet is lost on a
  // link with this probability, drawn per frame from the run's seed (PFC and credit
  // frames are exempt). A lost frame never arrives, unless link_level_retry. 0..1.
  double link_frame_loss_rate = 0;
  // Link-level retry (UEC 1.0 LLR): every link keeps the frames it sent until the far
  // end acknowledges them and replays a lost one after one link round trip, in order,
  // so the transport never sees the loss. CBFC needs it under frame loss: a lost frame
  // would take its credits with it.
  bool link_level_retry = false;

  [[nodiscard]] status validate() const;
};

struct fabric_mode {
  link_layer link = link_layer::roce;
  routing_mode routing = routing_mode::ecmp;
  // RoCE: dcqcn (when the NIC enables it) or none; InfiniBand: ib_cc or none.
  congestion_control_kind congestion = congestion_control_kind::dcqcn;
  ib_cc_config ib_cc;
  bool ib_grh = false;  // a GRH on every packet (routed IB, or GID addressing)
  // InfiniBand buffers. Switch: bytes per (port, VL); 0 divides the switch buffer evenly
  // over every port and the VLs in use. HCA: bytes per VL it advertises to its switch
  // (the HCA drains to host memory at line rate, so this only has to cover the round trip).
  std::int64_t ib_vl_buffer_bytes = 0;
  std::int64_t ib_hca_buffer_bytes = 256 * 1024;
  std::int64_t credit_update_interval_ns = 0;  // credit_config::min_update_interval_ns
  // Port-to-port latency of every switch (pipeline and lookup; cut-through switches
  // quote it for the first bit in to the first bit out), added to each hop.
  std::int64_t switch_latency_ns = 0;
  uec_config uec;  // link == uec only

  [[nodiscard]] status validate() const;
};

// The switch config of an InfiniBand switch from a RoCE-style template: 64-byte cells
// (one credit each), VLs in vl_mask credit-controlled with a fixed buffer each
// (mode.ib_vl_buffer_bytes, or the buffer split evenly over ports x VLs), no reserves, no
// headroom, no egress limits (the credits bound every queue), IB framing on the wire, no
// ECN (FECN marking follows annex A10's own rules: see ib_congestion_control.hpp).
[[nodiscard]] switch_config infiniband_switch_config(switch_config sc, std::uint8_t vl_mask, const fabric_mode& mode,
                                                     std::uint32_t framing_bytes);

// A switch class as a procurement sheet describes it (per port), with prices.
struct switch_profile {
  std::string name;                 // "InfiniBand NDR class"
  link_layer link = link_layer::roce;
  double port_gbps = 400;
  std::uint32_t ports = 64;         // radix
  std::int64_t buffer_bytes = 0;    // whole-switch packet buffer
  std::int64_t port_to_port_latency_ns = 0;
  std::int64_t cell_bytes = 256;
  // Shared-buffer admission: a PG or queue may take alpha x the free shared buffer
  // (dynamic threshold; SAI and SONiC's dynamic_th = log2(alpha)).
  double alpha = 1.0;
  // PFC headroom policy (rocelab buffers): the cable length and the NIC's PFC response
  // time it must cover, and whether every port reserves its own (per_port) or the ports
  // share a pool of (ports x headroom) / oversubscription (shared, as Broadcom-class
  // switches do).
  double cable_m = 30;
  std::int64_t peer_response_ns = 1000;
  bool headroom_shared = false;
  double headroom_oversubscription = 1;
  // Prices, USD: per switch port, per NIC/HCA, per optic (transceiver; two per link).
  double price_per_port_usd = 0;
  double nic_price_usd = 0;
  double optic_price_usd = 0;
  std::string source;               // where the figures come from (editable seed values)
};

}  // namespace rocelab::fabric
