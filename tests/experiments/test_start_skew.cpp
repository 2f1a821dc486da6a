// The start skew of a real-time run against timing.max_start_skew_ns
// (experiments/run/start_skew.hpp), and the spec field that sets it.
#include <gtest/gtest.h>

#include "rocelab/experiments/run/start_skew.hpp"
#include "rocelab/experiments/spec/spec.hpp"

namespace rocelab::experiments {
namespace {

run_records started(std::map<std::string, std::int64_t> offsets) {
  run_records r;
  r.start_offsets_ns = std::move(offsets);
  r.start_source = "capture";
  return r;
}

TEST(start_skew, is_the_spread_of_the_offsets) {
  EXPECT_EQ(start_skew_ns({}), 0);
  EXPECT_EQ(start_skew_ns({{"h1", 40}}), 0);
  EXPECT_EQ(start_skew_ns({{"h1", 40}, {"h2", -10}, {"h3", 2'000}}), 2'010);
}

TEST(start_skew, within_the_limit_or_without_one_is_no_violation) {
  const run_records r = started({{"h1", 0}, {"h2", 80'000}});
  EXPECT_EQ(start_skew_violation(r, 0), "") << "0: no limit";
  EXPECT_EQ(start_skew_violation(r, 100'000), "");
  EXPECT_EQ(start_skew_violation(r, 80'000), "") << "at the limit is within it";
  EXPECT_EQ(start_skew_violation(run_records{}, 1), "") << "nothing measured (the twin)";
}

TEST(start_skew, beyond_the_limit_names_the_numbers_and_the_hosts) {
  const run_records r = started({{"h2", 300'000}, {"h5", 2'800'000}, {"h9", 1'000'000}});
  const std::string why = start_skew_violation(r, 100'000);
  EXPECT_EQ(why,
            "senders started 2.50 ms apart (h2 first, h5 last, from the capture), beyond timing.max_start_skew_ns "
            "100 us");
}

TEST(start_skew, clock_uncertainty_counts_against_the_limit) {
  const run_records r = started({{"a", 0}, {"b", 60'000}});
  EXPECT_EQ(start_skew_violation(r, 100'000, 30'000), "");
  const std::string why = start_skew_violation(r, 100'000, 50'000);
  EXPECT_NE(why.find("60.0 us apart"), std::string::npos) << why;
  EXPECT_NE(why.find("clock uncertainty of 50.0 us"), std::string::npos) << why;
}

TEST(start_skew, the_spec_field_takes_a_duration_and_round_trips) {
  auto spec = load_spec("name: s\nbackend: virtual\ntiming:\n  max_start_skew_ns: 100us\n", "t.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  EXPECT_EQ(spec->timing.max_start_skew_ns, 100'000);
  auto again = load_spec(to_yaml(*spec), "again.yaml");
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_EQ(again->timing.max_start_skew_ns, 100'000);
  EXPECT_EQ(load_spec("name: s\n", "t.yaml")->timing.max_start_skew_ns, 0) << "no limit by default";
  auto bad = load_spec("name: s\ntiming:\n  max_start_skew: 1ms\n", "bad.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("did you mean timing.max_start_skew_ns?"), std::string::npos) << bad.error().message();
}

}  // namespace
}  // namespace rocelab::experiments
