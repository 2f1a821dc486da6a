// The message list (ROCELAB_PROTOCOL_MESSAGES, messages.hpp) against everything derived
// from it. The per-message cases are typed over the `message` variant's alternatives, so a
// message added to the list is covered here without touching this file.
#include "rocelab/protocol/messages.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeindex>
#include <typeinfo>
#include <utility>
#include <variant>
#include <vector>

namespace rocelab::protocol {
namespace {

// A body its schema accepts. Most messages accept their default; one whose schema refuses
// the default (a name required, a positive timeout) needs a specialisation here.
template <typename Body>
Body valid_sample() {
  return Body{};
}
template <>
hello valid_sample<hello>() {
  return hello{peer_role::agent, "h1", {}, 1};
}
template <>
start_job valid_sample<start_job>() {
  start_job j;
  j.timeout_ms = 1;
  return j;
}
template <>
register_worker valid_sample<register_worker>() {
  register_worker w;
  w.name = "node1-1";
  return w;
}
template <>
trial_assignment valid_sample<trial_assignment>() {
  trial_assignment a;
  a.attempt = 1;
  return a;
}

// Where Body sits in the list: its alternative in `message`, its row in message_kinds.
template <typename Body, std::size_t... I>
constexpr std::size_t position_of(std::index_sequence<I...>) {
  std::size_t at = sizeof...(I);
  ((std::is_same_v<Body, std::variant_alternative_t<I, message>> ? (at = I, true) : false) || ...);
  return at;
}
template <typename Body>
constexpr std::size_t list_position = position_of<Body>(std::make_index_sequence<std::variant_size_v<message>>{});

template <typename Variant>
struct gtest_types_of;
template <typename... Bodies>
struct gtest_types_of<std::variant<Bodies...>> {
  using type = ::testing::Types<Bodies...>;
};

// Names each typed case after its message's wire name: protocol_message_list/clock_reply.<case>.
struct wire_names {
  template <typename Body>
  static std::string GetName(int) {
    return message_kinds[list_position<Body>].name;
  }
};

template <typename Body>
class protocol_message_list : public ::testing::Test {};
TYPED_TEST_SUITE(protocol_message_list, gtest_types_of<message>::type, wire_names);

TYPED_TEST(protocol_message_list, body_is_the_struct_its_tag_names) {
  constexpr message_kind kind = message_kinds[list_position<TypeParam>];
  EXPECT_TRUE((std::is_same_v<message_body_t<kind.type>, TypeParam>)) << kind.name;
}

TYPED_TEST(protocol_message_list, type_of_gives_its_tag) {
  const message_kind kind = message_kinds[list_position<TypeParam>];
  EXPECT_EQ(type_of(message(TypeParam{})), kind.type) << kind.name;
  EXPECT_EQ(type_of(message(valid_sample<TypeParam>())), kind.type) << kind.name;
}

TYPED_TEST(protocol_message_list, name_round_trips_through_to_string_and_parse) {
  const message_kind kind = message_kinds[list_position<TypeParam>];
  EXPECT_EQ(std::string_view(to_string(kind.type)), std::string_view(kind.name));
  EXPECT_EQ(parse_message_type(kind.name), kind.type) << kind.name;
  EXPECT_EQ(parse_message_type(to_string(kind.type)), kind.type) << kind.name;
}

TYPED_TEST(protocol_message_list, frame_carries_its_tag_and_decodes_to_the_same_alternative) {
  const message_kind kind = message_kinds[list_position<TypeParam>];
  const auto frame = encode(valid_sample<TypeParam>());
  ASSERT_TRUE(frame.ok()) << kind.name << ": " << frame.error().message();

  const auto tag = static_cast<std::uint16_t>(kind.type);
  ASSERT_GE(frame->size(), frame_header_bytes);
  EXPECT_EQ((*frame)[6], tag >> 8) << kind.name;
  EXPECT_EQ((*frame)[7], tag & 0xff) << kind.name;
  const auto header = parse_header(*frame);
  ASSERT_TRUE(header.ok()) << kind.name << ": " << header.error().message();
  EXPECT_EQ(header->type, kind.type);

  const auto back = decode_frame(*frame);
  ASSERT_TRUE(back.ok()) << kind.name << ": " << back.error().message()
                         << " (a message whose default body its schema refuses needs a valid_sample)";
  EXPECT_TRUE(std::holds_alternative<TypeParam>(*back)) << kind.name;
  EXPECT_EQ(back->index(), list_position<TypeParam>);
  EXPECT_EQ(type_of(*back), kind.type);

  // The decoder read every field the encoder wrote: the same body encodes to the same bytes.
  const auto again = encode(*back);
  ASSERT_TRUE(again.ok()) << kind.name;
  EXPECT_EQ(*again, *frame) << kind.name;
}

TYPED_TEST(protocol_message_list, body_under_another_tag_is_not_taken_for_it) {
  // A body decoded under its own tag gives its own struct, never a neighbour in the list
  // that happens to share the schema (nic_command and nic_event do).
  const message_kind kind = message_kinds[list_position<TypeParam>];
  const auto frame = encode(valid_sample<TypeParam>());
  ASSERT_TRUE(frame.ok());
  const std::span<const std::uint8_t> body(frame->data() + frame_header_bytes, frame->size() - frame_header_bytes);
  for (const message_kind& other : message_kinds) {
    const auto decoded = decode_body(other.type, body);
    if (!decoded.ok()) continue;  // another schema refuses it: as it should, mostly
    EXPECT_EQ(type_of(*decoded), other.type) << kind.name << " body under " << other.name;
  }
}

TEST(protocol_message_list, has_no_duplicate_tags_names_or_bodies) {
  std::set<std::uint16_t> tags;
  std::set<std::string_view> names;
  for (const message_kind& k : message_kinds) {
    EXPECT_TRUE(tags.insert(static_cast<std::uint16_t>(k.type)).second) << "tag " << static_cast<int>(k.type);
    EXPECT_TRUE(names.insert(k.name).second) << "name " << k.name;
  }
  EXPECT_EQ(std::size(message_kinds), std::variant_size_v<message>);
  const std::vector<std::type_index> bodies = []<std::size_t... I>(std::index_sequence<I...>) {
    return std::vector<std::type_index>{typeid(std::variant_alternative_t<I, message>)...};
  }(std::make_index_sequence<std::variant_size_v<message>>{});
  std::set<std::type_index> distinct;
  for (std::size_t i = 0; i < bodies.size(); ++i)
    EXPECT_TRUE(distinct.insert(bodies[i]).second) << message_kinds[i].name << "'s body struct is another's too";
}

// Peers and recorded frames know these names and tags: each stays in the list as it is.
// (One way only: a new message needs no line here, a renumbered or renamed one fails.)
struct wire_identity {
  const char* name;
  std::uint16_t tag;
};
constexpr wire_identity identities_in_use[] = {
    {"hello", 1},           {"welcome", 2},           {"heartbeat", 3},      {"clock_probe", 4},
    {"clock_reply", 5},     {"clock_exchange", 6},    {"apply_settings", 10}, {"settings_applied", 11},
    {"start_job", 12},      {"job_report", 13},       {"restore_settings", 14}, {"settings_restored", 15},
    {"stop_job", 16},       {"nic_command", 17},      {"nic_event", 18},     {"submit_run", 20},
    {"run_finished", 21},   {"error", 30},            {"register_worker", 40}, {"trial_assignment", 41},
    {"trial_result", 42},
};

TEST(protocol_message_list, names_and_tags_in_use_never_change) {
  for (const wire_identity& in_use : identities_in_use) {
    const auto type = parse_message_type(in_use.name);
    ASSERT_TRUE(type) << in_use.name << " left the list";
    EXPECT_EQ(static_cast<std::uint16_t>(*type), in_use.tag) << in_use.name << " changed its tag";
  }
}

TEST(protocol_message_list, a_name_or_tag_not_in_it_is_no_message) {
  EXPECT_FALSE(parse_message_type(""));
  EXPECT_FALSE(parse_message_type("error_message")) << "the wire name is error, not the struct's name";
  EXPECT_FALSE(parse_message_type("Hello"));
  EXPECT_STREQ(to_string(static_cast<message_type>(999)), "unknown");
  const std::uint8_t empty_object[] = {'{', '}'};
  const auto body = decode_body(static_cast<message_type>(999), empty_object);
  ASSERT_FALSE(body.ok());
  EXPECT_NE(body.error().message().find("unknown message type 999"), std::string::npos) << body.error().message();
}

}  // namespace
}  // namespace rocelab::protocol
