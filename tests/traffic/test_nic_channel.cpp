// The NIC channel (nic_channel.hpp): every command and event survives its line, each tag
// names its message and back, the lines are the exact bytes the NIC's peers read, and a
// malformed line is refused naming the line and the problem.
#include "rocelab/traffic/soft_nic/nic_channel.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rocelab::traffic::soft_nic {
namespace {

sent_event soft_sent() {
  sent_event e;
  e.ref = 7;
  e.qpn = 0x103;
  e.peer = 3;
  e.bytes = 65536;
  e.start_ns = 1'000;
  e.end_ns = 9'000;
  e.first_tx_ns = 1'200;
  e.last_tx_ns = 8'000;
  e.wire_bytes = 70'000;
  e.last_wire_bytes = 1'100;
  e.retransmits = 2;
  e.cnps = 4;
  return e;
}

// Equality through the encoder: two messages are the same when they write the same line.
template <typename Message>
void expect_round_trip(const Message& m, result<Message> (*decode)(std::string_view)) {
  const std::string line = encode_line(m);
  auto back = decode(line);
  ASSERT_TRUE(back.ok()) << line << ": " << back.error().message();
  EXPECT_EQ(back->index(), m.index()) << line;
  EXPECT_EQ(encode_line(*back), line);
}

TEST(nic_channel, every_command_round_trips) {
  const std::vector<nic_command> commands = {
      post_command{0x102, verb::rdma_write, 4096, 11, 0},
      post_command{0x105, verb::send, 1, 12, 123'456'789},
      stop_command{},
  };
  for (const auto& c : commands) expect_round_trip(c, decode_command_line);
  auto armed = decode_command_line(encode_line(commands[1]));
  ASSERT_TRUE(armed.ok());
  const auto& p = std::get<post_command>(*armed);
  EXPECT_EQ(p.qpn, 0x105u);
  EXPECT_EQ(p.kind, verb::send);
  EXPECT_EQ(p.bytes, 1u);
  EXPECT_EQ(p.ref, 12u);
  EXPECT_EQ(p.at_ns, 123'456'789);
}

TEST(nic_channel, every_event_round_trips) {
  sent_event hardware;  // a hardware NIC's job: no wire times, counts not per message
  hardware.ref = 3;
  hardware.bytes = 10;
  counters_event counters;
  counters.counters = {{"tx_cnps", 5}, {"cpu_ns", 123}, {"rx_processing", {{"count", 0}}}};
  const std::vector<nic_event> events = {
      ready_event{42},
      soft_sent(),
      hardware,
      recv_event{0x201, 1, 0, 4096, 3, 5'000},
      counters,
      counters_event{},
      error_event{9, "no QP 77"},
      error_event{std::nullopt, "unknown"},
  };
  for (const auto& e : events) expect_round_trip(e, decode_event_line);

  auto sent = decode_event_line(encode_line(nic_event{soft_sent()}));
  ASSERT_TRUE(sent.ok());
  const auto& s = std::get<sent_event>(*sent);
  EXPECT_EQ(s.first_tx_ns, 1'200);
  EXPECT_EQ(s.last_wire_bytes, 1'100);
  EXPECT_EQ(s.retransmits, 2u);
  auto hw = decode_event_line(encode_line(nic_event{hardware}));
  ASSERT_TRUE(hw.ok());
  EXPECT_FALSE(std::get<sent_event>(*hw).retransmits.has_value()) << "null is not measured, not 0";
  EXPECT_FALSE(std::get<sent_event>(*hw).first_tx_ns.has_value());
  auto c = decode_event_line(encode_line(nic_event{counters}));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(std::get<counters_event>(*c).counters, counters.counters) << "every counter, without the tag";
}

TEST(nic_channel, each_tag_names_its_message_and_back) {
  const std::vector<std::pair<nic_command_type, const char*>> commands = {{nic_command_type::post, "post"},
                                                                          {nic_command_type::stop, "stop"}};
  for (const auto& [t, tag] : commands) {
    EXPECT_STREQ(to_string(t), tag);
    EXPECT_EQ(parse_nic_command_type(tag), t);
  }
  const std::vector<std::pair<nic_event_type, const char*>> events = {
      {nic_event_type::ready, "ready"}, {nic_event_type::sent, "sent"},   {nic_event_type::recv, "recv"},
      {nic_event_type::counters, "counters"}, {nic_event_type::error, "error"}};
  for (const auto& [t, tag] : events) {
    EXPECT_STREQ(to_string(t), tag);
    EXPECT_EQ(parse_nic_event_type(tag), t);
  }
  EXPECT_EQ(parse_nic_command_type("sent"), std::nullopt) << "an event's tag is no command";
  EXPECT_EQ(parse_nic_event_type("post"), std::nullopt);
  EXPECT_STREQ(to_string(static_cast<nic_event_type>(200)), "unknown");
  EXPECT_EQ(type_of(nic_command{stop_command{}}), nic_command_type::stop);
  EXPECT_EQ(type_of(nic_event{recv_event{}}), nic_event_type::recv);
  EXPECT_EQ(type_of(decode_event_line(R"({"ev":"ready","t_ns":1})").value()), nic_event_type::ready);
}

// Compact JSON, keys in sorted order: the bytes the verbs job writes and recorded lines hold.
TEST(nic_channel, lines_are_compact_json_with_keys_in_sorted_order) {
  EXPECT_EQ(encode_line(nic_command{post_command{258, verb::rdma_write, 4096, 5, 0}}),
            R"({"bytes":4096,"op":"post","qpn":258,"ref":5,"verb":"write"})");
  EXPECT_EQ(encode_line(nic_command{post_command{258, verb::rdma_write, 4096, 5, 77}}),
            R"({"at_ns":77,"bytes":4096,"op":"post","qpn":258,"ref":5,"verb":"write"})");
  EXPECT_EQ(encode_line(nic_command{stop_command{}}), R"({"op":"stop"})");
  EXPECT_EQ(encode_line(nic_event{ready_event{12}}), R"({"ev":"ready","t_ns":12})");
  EXPECT_EQ(encode_line(nic_event{soft_sent()}),
            R"({"bytes":65536,"cnps":4,"end_ns":9000,"ev":"sent","first_tx_ns":1200,"last_tx_ns":8000,)"
            R"("last_wire_bytes":1100,"peer":3,"qpn":259,"ref":7,"retransmits":2,"start_ns":1000,"wire_bytes":70000})");
  EXPECT_EQ(encode_line(nic_event{recv_event{513, 1, 2, 4096, 3, 5000}}),
            R"({"bytes":4096,"ce":3,"end_ns":5000,"ev":"recv","msn":2,"peer":1,"qpn":513})");
  EXPECT_EQ(encode_line(nic_event{error_event{9, "no QP"}}), R"({"error":"no QP","ev":"error","ref":9})");
}

struct malformed_case {
  const char* name;
  const char* line;
  const char* problem;  // what the error must say, after the line it quotes
};

TEST(nic_channel, a_malformed_line_is_refused_naming_the_line_and_the_problem) {
  const malformed_case commands[] = {
      {"not JSON", "post 1 2", "not a JSON object"},
      {"not an object", "[1,2]", "not a JSON object"},
      {"no tag", R"({"qpn":1})", "field op: missing"},
      {"unknown tag", R"({"op":"flush"})", "unknown op \"flush\""},
      {"missing field", R"({"op":"post","qpn":258,"verb":"write","ref":1})", "field bytes: missing"},
      {"wrong type", R"({"op":"post","qpn":"258","verb":"write","bytes":1,"ref":1})", "field qpn: expected an integer"},
      {"out of range", R"({"op":"post","qpn":4294967296,"verb":"write","bytes":1,"ref":1})", "field qpn: out of range"},
      {"negative", R"({"op":"post","qpn":258,"verb":"write","bytes":-1,"ref":1})", "field bytes: must not be negative"},
      {"unknown verb", R"({"op":"post","qpn":258,"verb":"read","bytes":1,"ref":1})", "field verb: expected"},
      {"unknown field", R"({"op":"stop","now":true})", "field now: unknown field"},
  };
  for (const auto& c : commands) {
    auto r = decode_command_line(c.line);
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(r.error().code(), error_code::malformed_input) << c.name;
    const std::string msg = r.error().message();
    EXPECT_NE(msg.find(std::string("NIC command line ") + c.line), std::string::npos) << c.name << ": " << msg;
    EXPECT_NE(msg.find(c.problem), std::string::npos) << c.name << ": " << msg;
  }
  const malformed_case events[] = {
      {"a command on the event side", R"({"op":"stop"})", "field ev: missing"},
      {"unknown event", R"({"ev":"endpoints","device":"mlx5_0"})", "unknown ev \"endpoints\""},
      {"sent without its ref", R"({"ev":"sent","qpn":1,"peer":1,"bytes":1,"start_ns":1,"end_ns":2})", "field ref: missing"},
      {"retransmits not a count", R"({"ev":"sent","ref":1,"qpn":1,"peer":1,"bytes":1,"start_ns":1,"end_ns":2,"retransmits":"x"})",
       "field retransmits: expected an integer"},
      {"error without its text", R"({"ev":"error","ref":1})", "field error: missing"},
      {"ready with a string time", R"({"ev":"ready","t_ns":"soon"})", "field t_ns: expected an integer"},
  };
  for (const auto& c : events) {
    auto r = decode_event_line(c.line);
    ASSERT_FALSE(r.ok()) << c.name;
    const std::string msg = r.error().message();
    EXPECT_NE(msg.find(std::string("NIC event line ") + c.line), std::string::npos) << c.name << ": " << msg;
    EXPECT_NE(msg.find(c.problem), std::string::npos) << c.name << ": " << msg;
  }
}

TEST(nic_channel, a_long_malformed_line_is_quoted_in_part) {
  const std::string line = R"({"op":"post","junk":")" + std::string(1000, 'x') + "\"}";
  auto r = decode_command_line(line);
  ASSERT_FALSE(r.ok());
  EXPECT_LT(r.error().message().size(), 400u);
  EXPECT_NE(r.error().message().find("..."), std::string::npos);
}

}  // namespace
}  // namespace rocelab::traffic::soft_nic
