#include "rocelab/fabric/soft_switch/latency_histogram_json.hpp"

namespace rocelab::fabric::soft_switch {

using json = nlohmann::json;

json to_json(const latency_histogram& h) {
  json buckets = json::array();
  for (const auto& [i, c] : h.nonzero()) buckets.push_back({i, c});
  const delay_quantiles q = h.quantiles();
  return {{"samples", h.count()}, {"min_ns", h.min_ns()}, {"max_ns", h.max_ns()},
          {"p50_ns", q.median()}, {"p99_ns", q.p99()},    {"buckets", std::move(buckets)}};
}

result<latency_histogram> latency_histogram_from_json(const json& j) {
  if (!j.is_object()) return status(error_code::malformed_input, "latency histogram: not an object");
  try {
    std::vector<std::pair<std::uint32_t, std::uint64_t>> buckets;
    for (const auto& b : j.at("buckets")) {
      if (!b.is_array() || b.size() != 2) return status(error_code::malformed_input, "latency histogram: a bucket is not [index, count]");
      buckets.emplace_back(b[0].get<std::uint32_t>(), b[1].get<std::uint64_t>());
    }
    auto h = latency_histogram::from_nonzero(buckets, j.at("min_ns").get<std::int64_t>(), j.at("max_ns").get<std::int64_t>());
    if (!h) return h.error();
    if (h->count() != j.at("samples").get<std::uint64_t>())
      return status(error_code::malformed_input, "latency histogram: samples " + j.at("samples").dump() +
                                                     " but its buckets hold " + std::to_string(h->count()));
    return h;
  } catch (const json::exception& e) {
    return status(error_code::malformed_input, std::string("latency histogram: ") + e.what());
  }
}

}  // namespace rocelab::fabric::soft_switch
