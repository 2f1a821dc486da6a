// The latency histogram's JSON (the switch's forwarding_latency, the NIC's rx_processing):
// what one side writes the other reads back, and a malformed one is refused naming why.
#include "rocelab/fabric/soft_switch/latency_histogram_json.hpp"

#include <gtest/gtest.h>

namespace rocelab::fabric::soft_switch {
namespace {

TEST(LatencyHistogramJson, RoundTripsAndCarriesTheMedianAndP99ForAReader) {
  latency_histogram h;
  for (std::int64_t v : {21'000, 22'000, 23'000, 70'000}) h.record(v);
  const nlohmann::json j = to_json(h);
  EXPECT_EQ(j["samples"], 4);
  EXPECT_EQ(j["p50_ns"], h.quantiles().median());
  auto back = latency_histogram_from_json(nlohmann::json::parse(j.dump()));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->quantiles(), h.quantiles());
}

TEST(LatencyHistogramJson, AnEmptyHistogramRoundTrips) {
  auto back = latency_histogram_from_json(to_json(latency_histogram{}));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->count(), 0u);
}

TEST(LatencyHistogramJson, RefusesWhatDoesNotAddUp) {
  latency_histogram h;
  h.record(5);
  nlohmann::json j = to_json(h);
  j["samples"] = 2;
  EXPECT_NE(latency_histogram_from_json(j).error().message().find("samples"), std::string::npos);
  EXPECT_FALSE(latency_histogram_from_json(nlohmann::json::array()).ok());
  EXPECT_FALSE(latency_histogram_from_json({{"samples", 1}, {"min_ns", 0}, {"max_ns", 0}, {"buckets", {{1}}}}).ok());
}

}  // namespace
}  // namespace rocelab::fabric::soft_switch
