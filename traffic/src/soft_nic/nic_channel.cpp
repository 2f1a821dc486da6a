// The NIC channel's codec (nic_channel.hpp): each message's fields, and the tag tables and
// dispatch derived from ROCELAB_NIC_COMMANDS and ROCELAB_NIC_EVENTS.
#include "rocelab/traffic/soft_nic/nic_channel.hpp"

#include <array>
#include <type_traits>
#include <utility>

#include "nic_line_fields.hpp"

namespace rocelab::traffic::soft_nic {

using json = nlohmann::json;

namespace {

// ---- each message's fields: write_fields gives them (without the tag), read_fields
// reads them through the line's reader.

json write_fields(const post_command& m) {
  json j{{"qpn", m.qpn}, {"verb", m.kind == verb::send ? "send" : "write"}, {"bytes", m.bytes}, {"ref", m.ref}};
  if (m.at_ns > 0) j["at_ns"] = m.at_ns;
  return j;
}
void read_fields(nic_line_fields& r, post_command& m) {
  r.get("qpn", m.qpn);
  std::string v;
  r.get("verb", v);
  if (r.ok() && v != "write" && v != "send") r.fail("verb", "expected \"write\" or \"send\", not \"" + v + "\"");
  m.kind = v == "send" ? verb::send : verb::rdma_write;
  r.get("bytes", m.bytes);
  r.get("ref", m.ref);
  std::optional<std::int64_t> at_ns;
  r.get_optional("at_ns", at_ns);
  m.at_ns = at_ns.value_or(0);
}

json write_fields(const stop_command&) { return json::object(); }
void read_fields(nic_line_fields&, stop_command&) {}

json write_fields(const ready_event& m) { return {{"t_ns", m.t_ns}}; }
void read_fields(nic_line_fields& r, ready_event& m) { r.get("t_ns", m.t_ns); }

json write_fields(const sent_event& m) {
  json j{{"ref", m.ref},         {"qpn", m.qpn},       {"peer", m.peer},
         {"bytes", m.bytes},     {"start_ns", m.start_ns}, {"end_ns", m.end_ns},
         {"retransmits", m.retransmits ? json(*m.retransmits) : json(nullptr)},
         {"cnps", m.cnps ? json(*m.cnps) : json(nullptr)}};
  if (m.first_tx_ns) j["first_tx_ns"] = *m.first_tx_ns;
  if (m.last_tx_ns) j["last_tx_ns"] = *m.last_tx_ns;
  if (m.wire_bytes) j["wire_bytes"] = *m.wire_bytes;
  if (m.last_wire_bytes) j["last_wire_bytes"] = *m.last_wire_bytes;
  return j;
}
void read_fields(nic_line_fields& r, sent_event& m) {
  r.get("ref", m.ref);
  r.get("qpn", m.qpn);
  r.get("peer", m.peer);
  r.get("bytes", m.bytes);
  r.get("start_ns", m.start_ns);
  r.get("end_ns", m.end_ns);
  r.get_optional("first_tx_ns", m.first_tx_ns);
  r.get_optional("last_tx_ns", m.last_tx_ns);
  r.get_optional("wire_bytes", m.wire_bytes);
  r.get_optional("last_wire_bytes", m.last_wire_bytes);
  r.get_optional("retransmits", m.retransmits);
  r.get_optional("cnps", m.cnps);
}

json write_fields(const recv_event& m) {
  return {{"qpn", m.qpn},     {"peer", m.peer}, {"msn", m.msn},
          {"bytes", m.bytes}, {"ce", m.ce_marked}, {"end_ns", m.end_ns}};
}
void read_fields(nic_line_fields& r, recv_event& m) {
  r.get("qpn", m.qpn);
  r.get("peer", m.peer);
  r.get("msn", m.msn);
  r.get("bytes", m.bytes);
  r.get("ce", m.ce_marked);
  r.get("end_ns", m.end_ns);
}

// Open: every field but the tag is a counter.
json write_fields(const counters_event& m) { return m.counters.is_object() ? m.counters : json::object(); }
void read_fields(nic_line_fields& r, counters_event& m) { m.counters = r.rest(); }

json write_fields(const error_event& m) {
  json j{{"error", m.error}};
  if (m.ref) j["ref"] = *m.ref;
  return j;
}
void read_fields(nic_line_fields& r, error_event& m) {
  r.get_optional("ref", m.ref);
  r.get("error", m.error);
}

// ---- the tables, from the lists.

#define ROCELAB_NIC_MESSAGE_TAG(name, body) #name,
constexpr std::array command_tags{ROCELAB_NIC_COMMANDS(ROCELAB_NIC_MESSAGE_TAG)};
constexpr std::array event_tags{ROCELAB_NIC_EVENTS(ROCELAB_NIC_MESSAGE_TAG)};
#undef ROCELAB_NIC_MESSAGE_TAG
static_assert(command_tags.size() == std::variant_size_v<nic_command>);
static_assert(event_tags.size() == std::variant_size_v<nic_event>);

template <std::size_t n>
std::optional<std::size_t> index_of(const std::array<const char*, n>& tags, std::string_view tag) {
  for (std::size_t i = 0; i < n; ++i)
    if (tag == tags[i]) return i;
  return std::nullopt;
}

template <typename Message, std::size_t I>
Message read_as(nic_line_fields& r) {
  std::variant_alternative_t<I, Message> m{};
  read_fields(r, m);
  return Message(std::in_place_index<I>, std::move(m));
}

// decoders[i] reads the fields of alternative i of Message.
template <typename Message, std::size_t... I>
constexpr auto make_decoders(std::index_sequence<I...>) {
  return std::array<Message (*)(nic_line_fields&), sizeof...(I)>{&read_as<Message, I>...};
}

// A line of a list whose tag field is `tag_field`: its JSON, its tag, then its fields.
template <typename Message, std::size_t n>
result<Message> decode(std::string_view line, const char* direction, const char* tag_field,
                       const std::array<const char*, n>& tags) {
  static constexpr auto decoders = make_decoders<Message>(std::make_index_sequence<n>{});
  const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return status(error_code::malformed_input, nic_line_fields::context(direction, line) + ": not a JSON object");
  nic_line_fields r(j, direction, line);
  std::string tag;
  r.get(tag_field, tag);
  if (!r.ok()) return r.finish();
  const auto i = index_of(tags, tag);
  if (!i) {
    r.fail("", std::string("unknown ") + tag_field + " \"" + tag + "\"");
    return r.finish();
  }
  Message m = decoders[*i](r);
  if (auto st = r.finish(); !st.ok()) return st;
  return m;
}

template <typename Message, std::size_t n>
std::string encode(const Message& m, const char* tag_field, const std::array<const char*, n>& tags) {
  json j = std::visit([](const auto& body) { return write_fields(body); }, m);
  j[tag_field] = tags[m.index()];
  return j.dump();
}

}  // namespace

const char* to_string(nic_command_type t) noexcept {
  const auto i = static_cast<std::size_t>(t);
  return i < command_tags.size() ? command_tags[i] : "unknown";
}
const char* to_string(nic_event_type t) noexcept {
  const auto i = static_cast<std::size_t>(t);
  return i < event_tags.size() ? event_tags[i] : "unknown";
}

std::optional<nic_command_type> parse_nic_command_type(std::string_view tag) noexcept {
  const auto i = index_of(command_tags, tag);
  return i ? std::optional(static_cast<nic_command_type>(*i)) : std::nullopt;
}
std::optional<nic_event_type> parse_nic_event_type(std::string_view tag) noexcept {
  const auto i = index_of(event_tags, tag);
  return i ? std::optional(static_cast<nic_event_type>(*i)) : std::nullopt;
}

nic_command_type type_of(const nic_command& m) noexcept { return static_cast<nic_command_type>(m.index()); }
nic_event_type type_of(const nic_event& m) noexcept { return static_cast<nic_event_type>(m.index()); }

std::string encode_line(const nic_command& m) { return encode(m, "op", command_tags); }
std::string encode_line(const nic_event& m) { return encode(m, "ev", event_tags); }

result<nic_command> decode_command_line(std::string_view line) {
  return decode<nic_command>(line, "command", "op", command_tags);
}
result<nic_event> decode_event_line(std::string_view line) {
  return decode<nic_event>(line, "event", "ev", event_tags);
}

}  // namespace rocelab::traffic::soft_nic
