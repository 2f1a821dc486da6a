// The records' JSON codec iterates the field tables (protocol/src/record_json.hpp): a
// record type that exists only here, and every real record with each field set, come back
// field for field; a field left at its default where the table says so stays off the wire.
#include "../../protocol/src/record_json.hpp"

#include <gtest/gtest.h>

#include <string>

#include "../support/record_fields_support.hpp"
#include "rocelab/protocol/messages.hpp"

namespace rocelab::protocol {
namespace {

using testing::differing_fields;
using testing::filled;
using testing::probe_record;

template <class Record>
Record json_round_trip(const Record& in) {
  const json j = record_json(in);
  field_reader r(j, "test record");
  Record out{};
  read_record(r, out);
  const auto st = r.finish();
  EXPECT_TRUE(st.ok()) << st.message();
  return out;
}

TEST(record_json, a_test_record_round_trips_every_field_of_its_table) {
  const auto in = filled<probe_record>();
  ASSERT_EQ(testing::default_fields(in), "");
  const auto out = json_round_trip(in);
  EXPECT_EQ(differing_fields(in, out), "");
  EXPECT_EQ(out.added, in.added);
  const json j = record_json(in);
  EXPECT_TRUE(j.contains("added"));
  EXPECT_EQ(j["colour"], static_cast<int>(in.colour)) << "an enumeration goes as its number";
}

TEST(record_json, a_field_marked_json_if_not_default_is_sent_only_when_it_differs) {
  probe_record p;
  EXPECT_FALSE(record_json(p).contains("counted"));
  p.counted = false;
  EXPECT_EQ(record_json(p)["counted"], false);
  flow_record f;
  const json j = record_json(f);
  EXPECT_FALSE(j.contains("repeat")) << "a repeat-0 flow encodes as before records carried their repeat";
  EXPECT_FALSE(j.contains("retransmits_measured"));
  f.repeat = 2;
  EXPECT_EQ(record_json(f)["repeat"], 2);
}

TEST(record_json, an_enumeration_beyond_its_values_is_refused_with_its_noun) {
  json j = record_json(probe_record{});
  j["colour"] = 3;
  field_reader r(j, "test record");
  probe_record out;
  read_record(r, out);
  const auto st = r.finish();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("field colour: unknown probe colour"), std::string::npos) << st.message();
}

TEST(record_json, a_missing_field_is_refused_unless_it_may_be_left_out) {
  json j = record_json(probe_record{});
  j.erase("added");
  field_reader r(j, "test record");
  probe_record out;
  read_record(r, out);
  const auto st = r.finish();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("field added: missing"), std::string::npos) << st.message();
}

// Every record of a trial result, each field set, through the whole message.
TEST(record_json, every_real_record_round_trips_through_a_trial_result) {
  trial_result in;
  in.repeats.push_back({1, 7, testing::filled_records(3)});
  testing::for_each_record_vector(in.repeats[0].records, [](auto& rows, const char* name) {
    EXPECT_EQ(testing::default_fields(rows.at(0)), "") << name;
  });
  auto frame = encode(in);
  ASSERT_TRUE(frame.ok()) << frame.error().message();
  auto decoded = decode_frame(*frame);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message();
  ASSERT_TRUE(std::holds_alternative<trial_result>(*decoded));
  auto out = std::get<trial_result>(*decoded);
  ASSERT_EQ(out.repeats.size(), 1u);
  auto& got = out.repeats[0].records;
  const auto& want = in.repeats[0].records;
  EXPECT_EQ(differing_fields(want.flows.at(0), got.flows.at(0)), "");
  EXPECT_EQ(differing_fields(want.pauses.at(0), got.pauses.at(0)), "");
  EXPECT_EQ(differing_fields(want.counters.at(0), got.counters.at(0)), "");
  EXPECT_EQ(differing_fields(want.queues.at(0), got.queues.at(0)), "");
  EXPECT_EQ(differing_fields(want.events.at(0), got.events.at(0)), "");
  EXPECT_EQ(differing_fields(want.allreduce.at(0), got.allreduce.at(0)), "");
}

}  // namespace
}  // namespace rocelab::protocol
