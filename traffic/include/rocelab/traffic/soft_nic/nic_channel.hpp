#pragma once
// The typed command channel between the run orchestrator (nic_fleet) and a soft NIC
// process (nic_process.hpp): every line after the config line, declared once, with one
// encoder and one decoder per message, used by both ends. Pure functions, no I/O.
//
// Wire: one JSON object per line (no newline in the text these functions take and give).
// A command's tag is its "op" field, an event's its "ev" field; the other fields are the
// message's schema below. Every field listed is required unless marked optional, has the
// listed JSON type and range, and no other field is allowed, except in `counters`, whose
// fields are whatever counters the NIC keeps (a hardware NIC's job reports its port's).
// A line is a compact nlohmann::json dump, keys in sorted order; the verbs job
// (agents/src/agent/verbs_worker.cpp) and recorded lines speak the same bytes
// (tests/traffic/test_nic_channel.cpp pins them).
//
// Errors name the line and what is wrong: "NIC event line {"ev":"sent","ref":"x"}: field
// ref: expected an integer".
// Ownership: messages are plain values.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

#include "rocelab/common/result.hpp"
#include "rocelab/traffic/soft_nic/rc_nic.hpp"

namespace rocelab::traffic::soft_nic {

// fleet -> NIC. X(name, body): `name` is the enumerator and the "op" value.
#define ROCELAB_NIC_COMMANDS(X)                                                                           \
  X(post, post_command) /* a message to send: now, or held until an armed instant (at_ns) */              \
  X(stop, stop_command) /* end the run: the NIC writes its counters and exits (EOF does the same) */

// NIC -> fleet. X(name, body): `name` is the enumerator and the "ev" value.
#define ROCELAB_NIC_EVENTS(X)                                                                             \
  X(ready, ready_event)       /* the port is open and the QPs connected */                                \
  X(sent, sent_event)         /* a message's last ACK arrived (send_completion) */                        \
  X(recv, recv_event)         /* a message was received in full (receive_completion) */                   \
  X(counters, counters_event) /* last, before the NIC exits */                                            \
  X(error, error_event)       /* a failed post or a command the NIC could not read */

// {"op":"post","qpn":Q,"verb":"write"|"send","bytes":B,"ref":R[,"at_ns":T]}
struct post_command {
  std::uint32_t qpn = 0;
  verb kind = verb::rdma_write;  // "verb": "write" | "send"
  std::uint64_t bytes = 0;
  std::uint64_t ref = 0;  // the fleet's message id; comes back in sent_event::ref
  // CLOCK_MONOTONIC instant the NIC holds the post until (nic_process.hpp); optional, 0
  // (or absent on the wire): post at once.
  std::int64_t at_ns = 0;
};

// {"op":"stop"}
struct stop_command {};

// {"ev":"ready","t_ns":T}
struct ready_event {
  std::int64_t t_ns = 0;
};

// {"ev":"sent","ref":R,"qpn":Q,"peer":P,"bytes":B,"start_ns":S,"end_ns":E,
//  "first_tx_ns":F,"last_tx_ns":L,"wire_bytes":W,"last_wire_bytes":LW,
//  "retransmits":N,"cnps":C}
// The four wire fields are optional (a hardware NIC's job does not report them; absent
// when nullopt); retransmits and cnps are null when not counted per message (a hardware
// NIC counts them per port), never a made-up 0.
struct sent_event {
  std::uint64_t ref = 0;
  std::uint32_t qpn = 0;
  std::uint32_t peer = 0;
  std::uint64_t bytes = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::optional<std::int64_t> first_tx_ns, last_tx_ns, wire_bytes, last_wire_bytes;
  std::optional<std::uint64_t> retransmits, cnps;
};

// {"ev":"recv","qpn":Q,"peer":P,"msn":M,"bytes":B,"ce":C,"end_ns":E}
struct recv_event {
  std::uint32_t qpn = 0;
  std::uint32_t peer = 0;
  std::uint64_t msn = 0;
  std::uint64_t bytes = 0;
  std::uint64_t ce_marked = 0;  // "ce"
  std::int64_t end_ns = 0;
};

// {"ev":"counters",...}: every field of the line but "ev", as the NIC wrote it (a soft
// NIC's: nic_process_report.hpp).
struct counters_event {
  nlohmann::json counters = nlohmann::json::object();
};

// {"ev":"error"[,"ref":R],"error":"..."}: ref, optional, names the post that failed.
struct error_event {
  std::optional<std::uint64_t> ref;
  std::string error;
};

enum class nic_command_type : std::uint8_t {
#define ROCELAB_NIC_MESSAGE_ENUMERATOR(name, body) name,
  ROCELAB_NIC_COMMANDS(ROCELAB_NIC_MESSAGE_ENUMERATOR)
};
enum class nic_event_type : std::uint8_t { ROCELAB_NIC_EVENTS(ROCELAB_NIC_MESSAGE_ENUMERATOR) };
#undef ROCELAB_NIC_MESSAGE_ENUMERATOR

namespace detail {
template <typename... T>
struct type_list {};
template <typename... A, typename... B>
type_list<A..., B...> operator+(type_list<A...>, type_list<B...>);
template <typename... T>
std::variant<T...> variant_of(type_list<T...>);
}  // namespace detail

// One alternative per message, in its list's order (a default-constructed nic_command is
// a post_command, a nic_event a ready_event).
#define ROCELAB_NIC_MESSAGE_ALTERNATIVE(name, body) +detail::type_list<body>{}
using nic_command = decltype(detail::variant_of(detail::type_list<>{} ROCELAB_NIC_COMMANDS(ROCELAB_NIC_MESSAGE_ALTERNATIVE)));
using nic_event = decltype(detail::variant_of(detail::type_list<>{} ROCELAB_NIC_EVENTS(ROCELAB_NIC_MESSAGE_ALTERNATIVE)));
#undef ROCELAB_NIC_MESSAGE_ALTERNATIVE

// The tag ("post", "sent"); "unknown" for a value not in the list.
[[nodiscard]] const char* to_string(nic_command_type t) noexcept;
[[nodiscard]] const char* to_string(nic_event_type t) noexcept;
// The type whose tag is `tag`; nullopt for a tag not in the list.
[[nodiscard]] std::optional<nic_command_type> parse_nic_command_type(std::string_view tag) noexcept;
[[nodiscard]] std::optional<nic_event_type> parse_nic_event_type(std::string_view tag) noexcept;

// The type of a message.
[[nodiscard]] nic_command_type type_of(const nic_command& m) noexcept;
[[nodiscard]] nic_event_type type_of(const nic_event& m) noexcept;

// The line for `m`, without its newline.
[[nodiscard]] std::string encode_line(const nic_command& m);
[[nodiscard]] std::string encode_line(const nic_event& m);

// The message on `line` (without its newline), checked against its schema.
[[nodiscard]] result<nic_command> decode_command_line(std::string_view line);
[[nodiscard]] result<nic_event> decode_event_line(std::string_view line);

}  // namespace rocelab::traffic::soft_nic
