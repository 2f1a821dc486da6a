#include "rocelab/common/units.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

namespace rocelab {
namespace {

struct size_case {
  const char* text;
  std::int64_t bytes;
};

TEST(units, sizes_in_binary_and_decimal_units) {
  const size_case cases[] = {
      {"64KiB", 65536},   {"20KB", 20000},      {"1.5MiB", 1572864}, {"100B", 100},
      {"4096", 4096},     {"32MiB", 33554432},  {"1 GiB", 1073741824}, {" 2MB ", 2000000},
      {"1.1KB", 1100},    {"0", 0},             {"1e3B", 1000},      {"+5KiB", 5120},
  };
  for (const auto& c : cases) {
    auto r = parse_size_bytes(c.text);
    ASSERT_TRUE(r.ok()) << c.text << ": " << r.error().message();
    EXPECT_EQ(*r, c.bytes) << c.text;
  }
}

TEST(units, size_errors_quote_the_text) {
  for (const char* text : {"64kb", "0.5B", "KiB", "", "-1KiB", "12 bananas", "64Kib", "nan", "1e30B"}) {
    auto r = parse_size_bytes(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.error().code(), error_code::invalid_argument);
    EXPECT_NE(r.error().message().find("'" + std::string(text) + "'"), std::string::npos) << r.error().message();
  }
}

TEST(units, rates_are_bits_per_second) {
  struct {
    const char* text;
    double bps;
  } cases[] = {{"100Gbps", 100e9}, {"25Gb/s", 25e9}, {"400 Gbps", 400e9}, {"1.5Tbps", 1.5e12},
               {"10Mbps", 10e6},   {"1000", 1000},   {"56Kb/s", 56e3}};
  for (const auto& c : cases) {
    auto r = parse_rate_bps(c.text);
    ASSERT_TRUE(r.ok()) << c.text << ": " << r.error().message();
    EXPECT_DOUBLE_EQ(*r, c.bps) << c.text;
  }
}

TEST(units, ambiguous_rates_are_rejected) {
  for (const char* text : {"400G", "100GB/s", "100gbps", "fast"}) {
    auto r = parse_rate_bps(text);
    EXPECT_FALSE(r.ok()) << text;
  }
}

TEST(units, durations_in_nanoseconds) {
  struct {
    const char* text;
    std::int64_t ns;
  } cases[] = {{"10us", 10'000}, {"1.5ms", 1'500'000}, {"300ns", 300}, {"2s", 2'000'000'000},
               {"750", 750},     {"2\xC2\xB5s", 2000}, {"0.5us", 500}};
  for (const auto& c : cases) {
    auto r = parse_duration_ns(c.text);
    ASSERT_TRUE(r.ok()) << c.text << ": " << r.error().message();
    EXPECT_EQ(*r, c.ns) << c.text;
  }
  EXPECT_FALSE(parse_duration_ns("1.5ns").ok());
  EXPECT_FALSE(parse_duration_ns("10 sec").ok());
  EXPECT_FALSE(parse_duration_ns("10m").ok());
}

TEST(units, formatting_round_trips) {
  EXPECT_EQ(format_size(65536), "64KiB");
  EXPECT_EQ(format_size(20000), "20KB");
  EXPECT_EQ(format_size(1500), "1500B");
  EXPECT_EQ(format_size(33554432), "32MiB");
  EXPECT_EQ(format_rate(100e9), "100Gbps");
  EXPECT_EQ(format_rate(1.5e9), "1.5Gbps");
  EXPECT_EQ(format_duration(1000), "1us");
  EXPECT_EQ(format_duration(1500), "1500ns");
  EXPECT_EQ(format_duration(2'000'000), "2ms");
  for (std::int64_t v : {1LL, 999LL, 1024LL, 1048576LL, 1536LL, 123456789LL, 2000000000LL}) {
    EXPECT_EQ(*parse_size_bytes(format_size(v)), v) << v;
    EXPECT_EQ(*parse_duration_ns(format_duration(v)), v) << v;
  }
  for (double v : {1.0, 25e9, 40e9, 12.5e9, 3.3e6}) EXPECT_DOUBLE_EQ(*parse_rate_bps(format_rate(v)), v) << v;
}

}  // namespace
}  // namespace rocelab

TEST(units, readable_durations_have_three_significant_digits_in_the_largest_unit) {
  const std::pair<double, const char*> cases[] = {
      {0, "0 ns"},          {850, "850 ns"},        {1311, "1.31 us"},        {335539, "336 us"},
      {295779981, "296 ms"}, {999'700, "1.00 ms"},  {12'400'000'000.0, "12.4 s"}, {-2500, "-2.50 us"},
      {99'960, "100 us"},   {1e6, "1.00 ms"}};
  for (const auto& [ns, text] : cases) EXPECT_EQ(rocelab::readable_duration(ns), text) << ns;
  EXPECT_EQ(rocelab::readable_duration(std::nan("")), "-");
}
