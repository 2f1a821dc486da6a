#pragma once
// The soft switch's control API: newline-delimited JSON over a Unix stream socket, one
// request object per line, one response object per line, in order.
//
// Typed operations only (no free-form evaluation); parse_request() turns a line into a
// `request` or an error naming the member that is wrong. Every response has "ok"; a
// failed one has "error" and, where one field is to blame, "field".
//
//   {"op":"ping"}                                   -> {"ok":true}
//   {"op":"status"}                                 -> ports, clock, pool, uptime
//   {"op":"fields"}                                 -> the settable fields and their scope
//   {"op":"get","field":F[,"port":P][,"priority":Q]} -> {"value":V} (an array per port /
//                                                      priority when the selector is left out)
//   {"op":"set","field":F,"value":V[,"port":P][,"priority":Q]}  (all ports/priorities
//                                                      when left out) -> {"ok":true}
//   {"op":"set","fields":[{field,value,port?,priority?},...]}     all or none
//   {"op":"config"}                                 -> the whole switch_config as JSON
//   {"op":"counters"} / {"op":"watermarks"}         -> per port, queue and PG
//   {"op":"reset_counters"} / {"op":"reset_watermarks"}
//   {"op":"prometheus"}                             -> {"text":"...exposition format..."}
//   {"op":"mirror"[,"enabled":b][,"direction":"ingress"|"egress"|"both"]
//        [,"truncate_bytes":n][,"erspan":0|2|3][,"session_id":n]
//        [,"pfc_tx":b][,"arrivals":b]}              -> the mirror session; pfc_tx: also
//                                                      mirror the PFC frames the switch
//                                                      sends itself (egress copies);
//                                                      arrivals: also an ERSPAN III
//                                                      ingress copy of each packet that
//                                                      begins a message (mirror.hpp)
//   {"op":"fault","kind":"drop"|"mark","dest_qp":Q,"nth":K[,"port":P][,"every":b]}
//   {"op":"fault","kind":"delay","port":P,"delay_ns":D}
//   {"op":"fault","kind":"pfc_storm","port":P,"priority":Q[,"quanta":N]
//        [,"interval_ns":I][,"count":C]}        -> {"id":N}
//   {"op":"faults"}                                 -> the active faults and their hits
//   {"op":"clear_faults"[,"id":N]}
//   {"op":"queue_sampling","interval_ns":N}        samples every egress queue's depth
//                                                      each N ns (at least 10000), dropping
//                                                      samples not yet read; 0 stops and
//                                                      keeps them to be read
//   {"op":"queue_samples"}                          -> {"samples":[[t_ns,port,queue,bytes],...],
//                                                      "dropped":n,"more":b}, the oldest 2000
//                                                      not yet returned (more: ask again); t_ns on
//                                                      the switch's CLOCK_MONOTONIC; a queue
//                                                      empty at two samples in a row is left out
// Ports are given by index (0-based, in lab order) or by interface name ("p1").

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rocelab/common/result.hpp"

namespace rocelab::fabric::soft_switch {

struct port_ref {
  int index = -1;    // >= 0 when given as a number
  std::string name;  // non-empty when given as a name
  [[nodiscard]] bool given() const { return index >= 0 || !name.empty(); }
};

enum class mirror_direction : std::uint8_t { ingress, egress, both };

struct mirror_update {
  std::optional<bool> enabled;
  std::optional<mirror_direction> direction;
  std::optional<std::uint32_t> truncate_bytes;
  std::optional<std::uint8_t> erspan_type;  // 0: plain copy, 2 or 3: ERSPAN
  std::optional<std::uint16_t> session_id;
  std::optional<bool> pfc_tx;  // mirror the switch's own PFC frames
  std::optional<bool> arrivals;  // mirror_settings::arrivals
};

enum class fault_kind : std::uint8_t { drop, mark, delay, pfc_storm };

struct fault_spec {
  fault_kind kind = fault_kind::drop;
  port_ref port;                  // drop/mark: ingress port filter (optional); delay/storm: the port
  std::uint32_t dest_qp = 0;      // drop/mark
  std::uint64_t nth = 1;          // drop/mark: the k-th matching packet (1-based)
  bool every = false;             // drop/mark: every k-th rather than only the k-th
  std::int64_t delay_ns = 0;      // delay
  std::uint8_t priority = 3;      // pfc_storm
  std::uint16_t quanta = 0xFFFF;  // pfc_storm
  std::int64_t interval_ns = 0;   // pfc_storm: 0 picks half the pause time
  std::uint64_t count = 0;        // pfc_storm: frames to send, 0 until cleared
};

struct field_assignment {
  std::string field;
  nlohmann::json value;
  port_ref port;
  int priority = -1;  // -1: all
};

struct request {
  enum class op : std::uint8_t {
    ping, status, fields, get, set, config, counters, watermarks, reset_counters, reset_watermarks,
    prometheus, mirror, fault, faults, clear_faults, queue_sampling, queue_samples
  };
  op kind = op::ping;
  std::string field;  // get
  port_ref port;      // get
  int priority = -1;  // get
  std::vector<field_assignment> assignments;  // set
  mirror_update mirror;
  fault_spec fault;
  std::optional<std::uint64_t> fault_id;  // clear_faults
  std::int64_t interval_ns = 0;           // queue_sampling
};

// A parse error's status message starts with the member at fault ("field: ..."); the
// response builder puts that member in "field".
[[nodiscard]] result<request> parse_request(std::string_view line);

// {"ok":false,"error":message[,"field":f]}.
[[nodiscard]] nlohmann::json error_response(const status& st, std::string_view field = {});

}  // namespace rocelab::fabric::soft_switch
