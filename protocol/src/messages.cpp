// Frame codec and the message dispatch (messages.hpp). The body is JSON because the
// messages are few, small and mostly control; the schema check is what makes it a
// contract: each message is read through a field_reader (field_reader.hpp) that requires
// every field, checks its type and range, and refuses fields it did not ask for. Every
// table here (tags, names, decoders) is derived from ROCELAB_PROTOCOL_MESSAGES; each
// message's fields are in its concern's *_codecs.cpp.
#include "rocelab/protocol/messages.hpp"

#include <array>
#include <cstring>
#include <iterator>
#include <string_view>
#include <type_traits>
#include <utility>

#include "body_codecs.hpp"

namespace rocelab::protocol {
namespace {

constexpr std::size_t message_count = std::size(message_kinds);
static_assert(std::variant_size_v<message> == message_count);

// One tag, name or body struct per message: a shared tag decodes as whichever comes first,
// a shared name confuses every log, a shared struct defeats type_of. (A repeated name or
// tag already fails in the header, as a repeated enumerator or message_body.)
consteval bool tags_and_names_are_distinct() {
  for (std::size_t i = 0; i < message_count; ++i)
    for (std::size_t j = i + 1; j < message_count; ++j)
      if (message_kinds[i].type == message_kinds[j].type ||
          std::string_view(message_kinds[i].name) == std::string_view(message_kinds[j].name))
        return false;
  return true;
}
static_assert(tags_and_names_are_distinct(), "ROCELAB_PROTOCOL_MESSAGES repeats a tag or a name");

template <typename Body, std::size_t... I>
consteval std::size_t alternatives_of_type(std::index_sequence<I...>) {
  return (std::size_t{std::is_same_v<Body, std::variant_alternative_t<I, message>>} + ... + 0);
}
template <std::size_t... I>
consteval bool bodies_are_distinct(std::index_sequence<I...> all) {
  return ((alternatives_of_type<std::variant_alternative_t<I, message>>(all) == 1) && ...);
}
static_assert(bodies_are_distinct(std::make_index_sequence<message_count>{}),
              "ROCELAB_PROTOCOL_MESSAGES names a body struct twice");

// The position of `t` in the list (and so its alternative in `message`); message_count
// when `t` is no message's tag.
constexpr std::size_t index_of(message_type t) noexcept {
  for (std::size_t i = 0; i < message_count; ++i)
    if (message_kinds[i].type == t) return i;
  return message_count;
}

bool known_type(std::uint16_t t) { return index_of(static_cast<message_type>(t)) < message_count; }

template <typename Body>
message read_as(field_reader& r) {
  Body m{};
  read_body(r, m);
  return message(std::in_place_type<Body>, std::move(m));
}

// decoders[i] reads the body of message_kinds[i].
template <std::size_t... I>
constexpr auto make_decoders(std::index_sequence<I...>) {
  return std::array<message (*)(field_reader&), sizeof...(I)>{&read_as<std::variant_alternative_t<I, message>>...};
}
constexpr auto decoders = make_decoders(std::make_index_sequence<message_count>{});

result<message> decode_json(message_type type, const json& body) {
  const std::size_t i = index_of(type);
  if (i == message_count)
    return status(error_code::malformed_input, "unknown message type " + std::to_string(static_cast<int>(type)));
  field_reader r(body, std::string("message ") + message_kinds[i].name);
  message out = r.ok() ? decoders[i](r) : message{};
  if (auto st = r.finish(); !st.ok()) return st;
  return out;
}

}  // namespace

const char* to_string(message_type t) noexcept {
  const std::size_t i = index_of(t);
  return i < message_count ? message_kinds[i].name : "unknown";
}

std::optional<message_type> parse_message_type(std::string_view name) noexcept {
  for (const message_kind& k : message_kinds)
    if (name == k.name) return k.type;
  return std::nullopt;
}

message_type type_of(const message& m) noexcept { return message_kinds[m.index()].type; }

result<frame_header> parse_header(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < frame_header_bytes)
    return status(error_code::malformed_input,
                  "frame header: " + std::to_string(bytes.size()) + " of " + std::to_string(frame_header_bytes) + " bytes");
  frame_header_wire w;
  std::memcpy(&w, bytes.data(), sizeof w);
  frame_header h;
  h.body_bytes = w.body_bytes.value();
  h.version = w.version.value();
  const std::uint16_t type = w.type.value();
  if (h.version != protocol_version)
    return status(error_code::unsupported, "frame header: protocol version " + std::to_string(h.version) +
                                               " (this side speaks " + std::to_string(protocol_version) + ")");
  if (!known_type(type))
    return status(error_code::malformed_input, "frame header: unknown message type " + std::to_string(type));
  h.type = static_cast<message_type>(type);
  if (h.body_bytes == 0) return status(error_code::malformed_input, "frame header: empty body");
  if (h.body_bytes > max_body_bytes)
    return status(error_code::resource_exhausted, "frame header: body of " + std::to_string(h.body_bytes) +
                                                      " bytes exceeds the limit of " + std::to_string(max_body_bytes));
  return h;
}

result<message> decode_body(message_type type, std::span<const std::uint8_t> body) {
  // No exceptions out of the parser: a malformed body is a normal input.
  json parsed = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded())
    return status(error_code::malformed_input, std::string("message ") + to_string(type) + ": body is not valid JSON");
  return decode_json(type, parsed);
}

result<message> decode_frame(std::span<const std::uint8_t> frame) {
  auto h = parse_header(frame);
  if (!h) return h.error();
  const std::size_t total = frame_header_bytes + h->body_bytes;
  if (frame.size() < total)
    return status(error_code::malformed_input, "frame: body truncated at " + std::to_string(frame.size() - frame_header_bytes) +
                                                   " of " + std::to_string(h->body_bytes) + " bytes");
  if (frame.size() > total)
    return status(error_code::malformed_input, "frame: " + std::to_string(frame.size() - total) + " bytes after the body");
  return decode_body(h->type, frame.subspan(frame_header_bytes, h->body_bytes));
}

result<std::vector<std::uint8_t>> encode(const message& m) {
  const json body = std::visit([](const auto& body) { return write_body(body); }, m);
  // Invalid UTF-8 in a string is replaced rather than thrown on: names come from peers.
  const std::string text = body.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > max_body_bytes)
    return status(error_code::resource_exhausted, std::string("encoding ") + to_string(type_of(m)) + ": body of " +
                                                      std::to_string(text.size()) + " bytes exceeds the limit");
  std::vector<std::uint8_t> out(frame_header_bytes + text.size());
  frame_header_wire w;
  w.body_bytes.set(static_cast<std::uint32_t>(text.size()));
  w.version.set(protocol_version);
  w.type.set(static_cast<std::uint16_t>(type_of(m)));
  std::memcpy(out.data(), &w, sizeof w);
  std::memcpy(out.data() + frame_header_bytes, text.data(), text.size());
  return out;
}

}  // namespace rocelab::protocol
