// The field tables themselves: a table that misses a member does not cover its record (the
// static_assert beside each real table), names are unique within a table, and every
// record carries its repeat.
#include "rocelab/common/record_fields.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "../support/record_fields_support.hpp"

namespace rocelab {

namespace testing {
struct two_members {
  std::uint32_t a = 0;
  std::string b;
};
struct three_members {
  std::uint32_t a = 0;
  std::string b;
  double added = 0;
};
}  // namespace testing

template <>
struct record_fields<testing::two_members> {
  static constexpr auto fields =
      std::tuple{field{"a", &testing::two_members::a}, field{"b", &testing::two_members::b}};
};
// The same two entries for a record that gained a third member.
template <>
struct record_fields<testing::three_members> {
  static constexpr auto fields =
      std::tuple{field{"a", &testing::three_members::a}, field{"b", &testing::three_members::b}};
};

namespace {

TEST(record_fields, a_table_covers_its_record_only_with_an_entry_per_member) {
  EXPECT_TRUE(table_covers_record<testing::two_members>);
  EXPECT_FALSE(table_covers_record<testing::three_members>);
  EXPECT_TRUE(table_covers_record<testing::probe_record>);
}

template <class Record>
std::string repeated_names() {
  std::set<std::string_view> seen;
  std::string repeated;
  for_each_field<Record>([&](const auto& f) {
    if (!seen.insert(f.name).second) repeated += std::string(f.name) + " ";
  });
  return repeated;
}

TEST(record_fields, names_are_unique_within_each_table) {
  EXPECT_EQ(repeated_names<flow_record>(), "");
  EXPECT_EQ(repeated_names<pause_interval>(), "");
  EXPECT_EQ(repeated_names<counter_sample>(), "");
  EXPECT_EQ(repeated_names<queue_sample>(), "");
  EXPECT_EQ(repeated_names<congestion_event>(), "");
  EXPECT_EQ(repeated_names<allreduce_result>(), "");
}

TEST(record_fields, every_record_carries_its_repeat_as_a_field) {
  const auto has_repeat = []<class Record>(Record*) {
    bool found = false;
    for_each_field<Record>([&](const auto& f) { found = found || f.name == "repeat"; });
    return found;
  };
  EXPECT_TRUE(has_repeat(static_cast<flow_record*>(nullptr)));
  EXPECT_TRUE(has_repeat(static_cast<pause_interval*>(nullptr)));
  EXPECT_TRUE(has_repeat(static_cast<counter_sample*>(nullptr)));
  EXPECT_TRUE(has_repeat(static_cast<queue_sample*>(nullptr)));
  EXPECT_TRUE(has_repeat(static_cast<congestion_event*>(nullptr)));
  EXPECT_TRUE(has_repeat(static_cast<allreduce_result*>(nullptr)));
}

}  // namespace
}  // namespace rocelab
