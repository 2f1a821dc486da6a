#pragma once
// fabric::latency_histogram as JSON, the form the soft switch's control API (per port
// "forwarding_latency" in `counters`) and the soft NIC's counters line ("rx_processing")
// carry it in:
//   {"samples": N, "min_ns": a, "max_ns": b, "p50_ns": m, "p99_ns": t, "buckets": [[i, c], ...]}
// bucket i as latency_histogram::bucket_of numbers it, only the non-empty ones; p50 and
// p99 are for a reader, the buckets are what a parser takes.

#include <nlohmann/json.hpp>

#include "rocelab/common/result.hpp"
#include "rocelab/fabric/latency_histogram.hpp"

namespace rocelab::fabric::soft_switch {

[[nodiscard]] nlohmann::json to_json(const latency_histogram& h);
// Fails on a shape other than the above or buckets out of range, naming what.
[[nodiscard]] result<latency_histogram> latency_histogram_from_json(const nlohmann::json& j);

}  // namespace rocelab::fabric::soft_switch
